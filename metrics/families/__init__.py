"""Pure-Python metric families. Nothing in this package imports Django."""

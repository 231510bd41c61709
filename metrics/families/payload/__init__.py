"""The PDP-deltas payload: its JSON Schema (``schema``) and the rules about its meaning
(``rules``: entity kinds, dates, references, problems). Pure Python, shared by both apps."""

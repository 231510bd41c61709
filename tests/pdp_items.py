"""Small PDP items for tests of payload rules and of the F1 over them."""


def person(ident, name, last_name="Smith", **extra):
    return {"id": ident, "name": name, "last_name": last_name, **extra}


def event(ident, description, person_id=None, kind="shift", **extra):
    return {"id": ident, "kind": kind, "description": description, "person": person_id, **extra}


def bond(ident, a, b):
    return {"id": ident, "person_a": a, "person_b": b}


def ids(items):
    return [item["id"] for item in items]

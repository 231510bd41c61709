"""Deterministic synthetic family-history discussions with GT and noisy AI extractions.

Used by the extraction-F1 benchmark and by the demo-data seeder. A discussion
alternates expert questions and subject answers; each subject statement carries
a ground-truth PDP delta and an AI delta derived from it with controlled noise
(name typos, paraphrased descriptions, shifted or reformatted dates, missed and
spurious items, wrong SARF codes).

Ground truth depends only on the seed. The AI delta of each item uses its own
random stream keyed by (seed, ai_run, statement, item), so two runs with the
same ai_run and different `noise` make the same random draws: the noisier run
corrupts a superset of what the cleaner one does.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any

# fmt: off
MALE_NAMES = (
    "James", "John", "Robert", "Michael", "William", "David", "Richard", "Joseph", "Thomas",
    "Charles", "Daniel", "Matthew", "Anthony", "Mark", "Steven", "Paul", "Andrew", "Joshua",
    "Kenneth", "Kevin", "Brian", "George", "Edward", "Ronald", "Timothy",
)
FEMALE_NAMES = (
    "Mary", "Patricia", "Jennifer", "Linda", "Elizabeth", "Barbara", "Susan", "Jessica", "Sarah",
    "Karen", "Lisa", "Nancy", "Betty", "Margaret", "Sandra", "Ashley", "Dorothy", "Kimberly",
    "Emily", "Donna", "Michelle", "Carol", "Amanda", "Helen",
)
LAST_NAMES = (
    "Smith", "Johnson", "Williams", "Brown", "Jones", "Miller", "Davis", "Wilson", "Anderson",
    "Taylor", "Thomas", "Moore", "Martin", "Jackson", "Thompson", "White", "Harris", "Clark",
    "Lewis", "Robinson", "Walker", "Young", "Allen", "King",
)
CITIES = (
    "Chicago", "Boston", "Denver", "Seattle", "Atlanta", "Phoenix", "Portland", "Dallas", "Omaha",
    "Cleveland",
)
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)
RELATIONSHIPS = (
    "fusion", "conflict", "distance", "overfunctioning", "underfunctioning", "projection",
    "defined-self", "toward", "away", "inside", "outside", "cutoff",
)
# fmt: on

# (kind, description template, SARF codes). {who} / {other} are role labels.
SHIFT_TEMPLATES: tuple[tuple[str, dict[str, str], bool], ...] = (
    ("{who} was diagnosed with cancer", {"symptom": "up", "anxiety": "up"}, False),
    ("{who} lost {pos} job", {"functioning": "down", "anxiety": "up"}, False),
    ("{who} started drinking heavily", {"symptom": "up", "functioning": "down"}, False),
    ("{who} stopped talking to {other}", {"relationship": "cutoff"}, True),
    ("{who} and {other} fought constantly", {"relationship": "conflict", "anxiety": "up"}, True),
    ("{who} took over caring for {other}", {"relationship": "overfunctioning"}, True),
    ("{who} had a panic attack", {"anxiety": "up", "symptom": "up"}, False),
    ("{who} felt relieved after the move", {"anxiety": "down"}, False),
    ("{who} grew closer to {other}", {"relationship": "fusion"}, True),
    ("{who} kept {pos} distance from {other}", {"relationship": "distance"}, True),
    ("{who} went back to school", {"functioning": "up"}, False),
    ("{who} was hospitalized for depression", {"symptom": "up", "functioning": "down"}, False),
)
PARAPHRASES: tuple[tuple[str, str], ...] = (
    ("was diagnosed with", "got diagnosed with"),
    ("started drinking heavily", "began drinking a lot"),
    ("stopped talking to", "cut off contact with"),
    ("fought constantly", "were always fighting"),
    ("took over caring for", "started looking after"),
    ("had a panic attack", "had an anxiety attack"),
    ("grew closer to", "got closer with"),
    ("went back to school", "returned to college"),
    ("was hospitalized for", "went into hospital for"),
    ("lost", "was fired from"),
    ("Mother", "Mom"),
    ("Father", "Dad"),
    ("Grandmother", "Grandma"),
)
EXPERT_QUESTIONS = (
    "Tell me a little about your family.",
    "What was going on in the family around that time?",
    "How did your mother react to that?",
    "When did things start to change between them?",
    "Who in the family was closest to you growing up?",
    "How were you sleeping during that period?",
    "What happened after that?",
    "How did the rest of the family respond?",
)
SARF_VALUES = {
    "symptom": ("up", "down", "same"),
    "anxiety": ("up", "down", "same"),
    "functioning": ("up", "down", "same"),
    "relationship": RELATIONSHIPS,
}


@dataclass
class SyntheticStatement:
    order: int
    speaker: str  # "subject" or "expert"; only subject statements carry deltas
    text: str
    gt_delta: dict[str, Any] | None = None
    ai_delta: dict[str, Any] | None = None


@dataclass
class SyntheticDiscussion:
    seed: int | str
    subject_name: str
    summary: str
    statements: list[SyntheticStatement] = field(default_factory=list)

    def subject_statements(self) -> list[SyntheticStatement]:
        return [s for s in self.statements if s.speaker == "subject"]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Member:
    id: int
    name: str
    last_name: str
    gender: str
    role: str  # how the subject refers to them: "Mother", "Brother", ...
    birth_year: int
    parents: int | None = None

    def as_person(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "last_name": self.last_name,
            "gender": self.gender,
            "parents": self.parents,
            "confidence": 0.9,
        }


@dataclass
class _Family:
    members: list[_Member] = field(default_factory=list)
    bonds: list[dict[str, Any]] = field(default_factory=list)
    next_id: int = -1

    def new_id(self) -> int:
        ident, self.next_id = self.next_id, self.next_id - 1
        return ident

    def member(self, ident: int) -> _Member:
        return next(m for m in self.members if m.id == ident)


# --- the family -------------------------------------------------------------


def _add_member(family, rng, role, gender, birth_year, last_name, parents=None) -> _Member:
    names = MALE_NAMES if gender == "male" else FEMALE_NAMES
    member = _Member(
        family.new_id(), rng.choice(names), last_name, gender, role, birth_year, parents
    )
    family.members.append(member)
    return member


def _add_bond(family: _Family, a: _Member, b: _Member, married: bool = True) -> int:
    bond_id = family.new_id()
    family.bonds.append(
        {"id": bond_id, "person_a": a.id, "person_b": b.id, "married": married, "confidence": 0.9}
    )
    return bond_id


def _build_family(rng: random.Random) -> tuple[_Family, _Member]:
    """Subject, parents, grandparents, siblings, an aunt or uncle, spouse, children."""
    family = _Family()
    surname, maiden = rng.sample(LAST_NAMES, 2)
    born = rng.randint(1960, 1990)
    grand = (
        _add_member(family, rng, "Grandfather", "male", born - 55, surname),
        _add_member(family, rng, "Grandmother", "female", born - 53, surname),
    )
    grand_bond = _add_bond(family, *grand)
    father = _add_member(family, rng, "Father", "male", born - 28, surname, grand_bond)
    mother = _add_member(family, rng, "Mother", "female", born - 26, maiden)
    parents = _add_bond(family, father, mother)
    aunt_gender = rng.choice(["male", "female"])
    aunt_role = "Uncle" if aunt_gender == "male" else "Aunt"
    _add_member(family, rng, aunt_role, aunt_gender, born - 30, surname, grand_bond)
    subject = _add_member(family, rng, "I", rng.choice(["male", "female"]), born, surname, parents)
    for _ in range(rng.randint(1, 3)):
        gender = rng.choice(["male", "female"])
        role = "Brother" if gender == "male" else "Sister"
        _add_member(family, rng, role, gender, born + rng.randint(-6, 6), surname, parents)
    spouse_gender = "female" if subject.gender == "male" else "male"
    spouse_role = "Wife" if spouse_gender == "female" else "Husband"
    spouse = _add_member(family, rng, spouse_role, spouse_gender, born + 1, rng.choice(LAST_NAMES))
    couple = _add_bond(family, subject, spouse, married=rng.random() < 0.8)
    for _ in range(rng.randint(0, 3)):
        gender = rng.choice(["male", "female"])
        role = "Son" if gender == "male" else "Daughter"
        _add_member(family, rng, role, gender, born + rng.randint(24, 36), surname, couple)
    return family, subject


# --- ground-truth statements ------------------------------------------------


def _date_text(rng: random.Random, year: int) -> tuple[str | None, str]:
    """A date in one of the forms people give, with its certainty."""
    roll = rng.random()
    if roll < 0.1:
        return None, "unknown"
    month, day = rng.randint(1, 12), rng.randint(1, 28)
    if roll < 0.65:
        return f"{year:04d}-{month:02d}-{day:02d}", "certain"
    if roll < 0.85:
        return f"{MONTHS[month - 1]} {year}", "approximate"
    return str(year), "approximate"


def _event(family, rng, who: _Member, others: list[_Member]) -> dict[str, Any]:
    year = min(2024, who.birth_year + rng.randint(18, 60))
    date_text, certainty = _date_text(rng, year)
    template, sarf, needs_other = rng.choice(SHIFT_TEMPLATES)
    other = rng.choice(others) if others else who
    pos = "my" if who.role == "I" else ("his" if who.gender == "male" else "her")
    other_label = "me" if other.role == "I" else other.role
    description = template.format(who=who.role, other=other_label, pos=pos)
    event: dict[str, Any] = {
        "id": family.new_id(),
        "kind": "shift",
        "person": who.id,
        "description": description,
        "dateTime": date_text,
        "dateCertainty": certainty,
        "relationshipTargets": [other.id] if needs_other else [],
        "relationshipTriangles": [],
        "confidence": 0.8,
    }
    for variable in ("symptom", "anxiety", "relationship", "functioning"):
        event[variable] = sarf.get(variable)
    return event


def _structural_event(family, rng, bond: dict[str, Any]) -> dict[str, Any]:
    a, b = family.member(bond["person_a"]), family.member(bond["person_b"])
    kind = rng.choice(["married", "moved", "separated", "bonded"])
    descriptions = {
        "married": f"{a.role} and {b.role} got married",
        "moved": f"{a.role} and {b.role} moved to {rng.choice(CITIES)}",
        "separated": f"{a.role} and {b.role} separated",
        "bonded": f"{a.role} met {b.role}",
    }
    date_text, certainty = _date_text(rng, max(a.birth_year, b.birth_year) + rng.randint(20, 30))
    return {
        "id": family.new_id(),
        "kind": kind,
        "person": a.id,
        "spouse": b.id,
        "description": descriptions[kind],
        "dateTime": date_text,
        "dateCertainty": certainty,
        "symptom": None,
        "anxiety": rng.choice([None, "up"]),
        "relationship": None,
        "functioning": None,
        "confidence": 0.8,
    }


def _gt_delta(
    family: _Family, rng: random.Random, past_events: list[int], past_bonds: set[int]
) -> dict[str, Any]:
    """3-8 people, 3-8 events, 1-3 pair bonds, all consistent with one another and with the
    earlier statements: a person's parents are named only once their bond has been told."""
    bonds = rng.sample(family.bonds, min(len(family.bonds), rng.randint(1, 3)))
    people_ids = {bond[key] for bond in bonds for key in ("person_a", "person_b")}
    extra = [m.id for m in family.members if m.id not in people_ids]
    wanted = min(len(extra), max(0, rng.randint(3, 8) - len(people_ids)))
    people_ids.update(rng.sample(extra, wanted))
    people = [m for m in family.members if m.id in people_ids]  # family order
    events = [_structural_event(family, rng, rng.choice(bonds))]
    for _ in range(rng.randint(2, 7)):
        who = rng.choice(people)
        events.append(_event(family, rng, who, [m for m in people if m is not who]))
    told = past_bonds | {bond["id"] for bond in bonds}
    delta: dict[str, Any] = {
        "people": [_told_parents(m.as_person(), told) for m in people],
        "events": events,
        "pair_bonds": [dict(bond) for bond in bonds],
        "delete": [],
    }
    if past_events and rng.random() < 0.05:  # the subject corrects an earlier point
        delta["delete"] = [rng.choice(past_events)]
    return delta


def _told_parents(person: dict[str, Any], told: set[int]) -> dict[str, Any]:
    if person["parents"] not in told:
        person["parents"] = None
    return person


def _statement_text(family: _Family, delta: dict[str, Any]) -> str:
    """What the subject said, built from the first two events of the delta."""
    sentences = []
    for event in delta["events"][:2]:
        words = event["description"]
        for member in family.members:
            if member.role != "I":
                words = words.replace(member.role, f"my {member.role.lower()}")
        sentences.append(f"{words[0].upper()}{words[1:]}{_spoken_date(event.get('dateTime'))}.")
    return " ".join(sentences)


def _spoken_date(text: str | None) -> str:
    """ "1985-03-12" -> " on March 12, 1985"; "March 2003" and "1990" -> " in ..." """
    if not text:
        return ""
    if len(text) == 10 and text[4] == "-":
        return f" on {MONTHS[int(text[5:7]) - 1]} {int(text[8:])}, {text[:4]}"
    return f" in {text}"


# --- noisy AI extraction ----------------------------------------------------


def _typo(rng: random.Random, word: str) -> str:
    if len(word) < 3:
        return word
    position = rng.randrange(1, len(word))
    action = rng.choice(["drop", "double", "swap"])
    if action == "drop":
        return word[:position] + word[position + 1 :]
    if action == "double":
        return word[:position] + word[position] + word[position:]
    return word[: position - 1] + word[position] + word[position - 1] + word[position + 1 :]


def _noisy_person(person: dict[str, Any], rng: random.Random, noise: float) -> dict[str, Any]:
    ai = dict(person)
    if rng.random() < noise:
        ai["name"] = _typo(rng, person["name"])
    if rng.random() < 0.2 * noise:
        ai["last_name"] = None  # the subject rarely says surnames
    if rng.random() < 0.2 * noise:
        ai["parents"] = None
    ai["confidence"] = round(rng.uniform(0.5, 1.0), 2)
    return ai


def _paraphrase(rng: random.Random, description: str) -> str:
    options = [(old, new) for old, new in PARAPHRASES if old in description]
    for old, new in rng.sample(options, len(options)):
        description = description.replace(old, new, 1)
    return description.lower() if rng.random() < 0.5 else description


def _noisy_date(rng: random.Random, event: dict[str, Any], ai: dict[str, Any]) -> None:
    text = event.get("dateTime")
    if not text:
        return
    roll = rng.random()
    if roll < 0.4 and len(text) == 10:  # an ISO date a few days off
        day = int(text[8:]) + rng.randint(-10, 10)
        ai["dateTime"] = f"{text[:8]}{min(28, max(1, day)):02d}"
    elif roll < 0.7:
        ai["dateTime"], ai["dateCertainty"] = text[:4], "approximate"
    else:
        ai["dateTime"], ai["dateCertainty"] = None, "unknown"


def _noisy_event(event: dict[str, Any], rng: random.Random, noise: float) -> dict[str, Any]:
    ai = dict(event)
    if rng.random() < noise:
        ai["description"] = _paraphrase(rng, event["description"])
    if rng.random() < 0.5 * noise:
        _noisy_date(rng, event, ai)
    for variable, values in SARF_VALUES.items():
        if rng.random() < 0.5 * noise:
            ai[variable] = rng.choice([None, *values])
    if rng.random() < 0.1 * noise:
        ai["kind"] = rng.choice(["shift", "moved", "married", "death"])
    ai["confidence"] = round(rng.uniform(0.4, 1.0), 2)
    return ai


def _spurious_items(delta, rng: random.Random, noise: float, next_id) -> dict[str, list]:
    """Things the AI invents: an extra person, an extra event."""
    invented: dict[str, list] = {"people": [], "events": []}
    if rng.random() < 0.3 * noise:
        gender = rng.choice(["male", "female"])
        names = MALE_NAMES if gender == "male" else FEMALE_NAMES
        invented["people"].append(
            {"id": next_id(), "name": rng.choice(names), "last_name": None, "gender": gender}
        )
    if rng.random() < 0.5 * noise and delta["people"]:
        who = rng.choice(delta["people"])
        invented["events"].append(
            {
                "id": next_id(),
                "kind": "shift",
                "person": who["id"],
                "description": rng.choice(["Felt anxious", "Things got tense", "Worried a lot"]),
                "anxiety": "up",
            }
        )
    return invented


def noisy_delta(
    gt_delta: dict[str, Any], *, seed: str, noise: float, id_base: int = -100_000
) -> dict[str, Any]:
    """An AI extraction of a GT delta. Matching items keep the GT ids (ground truth
    is an edited copy of the AI output); invented items get ids below id_base."""
    counter = iter(range(id_base, id_base - 1000, -1))

    def item_rng(kind: str, ident: Any) -> random.Random:
        return random.Random(f"{seed}/{kind}/{ident}")

    ai: dict[str, Any] = {"people": [], "events": [], "pair_bonds": [], "delete": []}
    for person in gt_delta["people"]:
        rng = item_rng("person", person["id"])
        if rng.random() >= 0.3 * noise:
            ai["people"].append(_noisy_person(person, rng, noise))
    for event in gt_delta["events"]:
        rng = item_rng("event", event["id"])
        if rng.random() >= 0.3 * noise:
            ai["events"].append(_noisy_event(event, rng, noise))
    for bond in gt_delta["pair_bonds"]:
        rng = item_rng("bond", bond["id"])
        if rng.random() >= 0.6 * noise:  # pair bonds are what the AI misses most
            ai["pair_bonds"].append(_noisy_bond(bond, rng))
    rng = item_rng("delta", "extras")
    for key, items in _spurious_items(gt_delta, rng, noise, lambda: next(counter)).items():
        ai[key].extend(items)
    if gt_delta.get("delete") and rng.random() >= noise:
        ai["delete"] = list(gt_delta["delete"])
    return ai


def _noisy_bond(bond: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    ai = dict(bond)
    if rng.random() < 0.5:  # order carries no meaning
        ai["person_a"], ai["person_b"] = bond["person_b"], bond["person_a"]
    return ai


# --- discussions ------------------------------------------------------------


def _seed_of(rng_or_seed: random.Random | int | str) -> int | str:
    if isinstance(rng_or_seed, random.Random):
        return rng_or_seed.getrandbits(64)
    return rng_or_seed


def generate_discussion(
    rng_or_seed: random.Random | int | str = 0,
    n_statements: int = 50,
    *,
    noise: float = 0.2,
    ai_run: int = 0,
    expert_turns: bool = True,
) -> SyntheticDiscussion:
    """A discussion with n_statements subject statements (each preceded by an
    expert question when expert_turns). noise in 0..1 scales every AI error rate."""
    seed = _seed_of(rng_or_seed)
    rng = random.Random(f"discussion/{seed}")
    family, subject = _build_family(rng)
    subject_name = f"{subject.name} {subject.last_name}"
    discussion = SyntheticDiscussion(
        seed=seed,
        subject_name=subject_name,
        summary=f"{subject_name} talks about {len(family.members) - 1} relatives "
        f"across three generations.",
    )
    past_events: list[int] = []
    past_bonds: set[int] = set()
    for index in range(n_statements):
        if expert_turns:
            discussion.statements.append(
                SyntheticStatement(
                    len(discussion.statements), "expert", rng.choice(EXPERT_QUESTIONS)
                )
            )
        gt = _gt_delta(family, rng, past_events, past_bonds)
        past_events.extend(event["id"] for event in gt["events"])
        past_bonds.update(bond["id"] for bond in gt["pair_bonds"])
        ai = noisy_delta(gt, seed=f"{seed}/ai/{ai_run}/{index}", noise=noise)
        discussion.statements.append(
            SyntheticStatement(
                len(discussion.statements), "subject", _statement_text(family, gt), gt, ai
            )
        )
    return discussion


def extraction_run(
    discussion: SyntheticDiscussion, *, noise: float, ai_run: int
) -> list[dict[str, Any]]:
    """Another AI extraction of the same ground truth, one delta per subject statement."""
    return [
        noisy_delta(s.gt_delta or {}, seed=f"{discussion.seed}/ai/{ai_run}/{i}", noise=noise)
        for i, s in enumerate(discussion.subject_statements())
    ]


def generate_workload(
    n_discussions: int = 100, n_statements: int = 50, *, seed: int = 0, noise: float = 0.2
) -> list[SyntheticDiscussion]:
    return [
        generate_discussion(seed * 1_000_003 + index, n_statements, noise=noise, expert_turns=False)
        for index in range(n_discussions)
    ]

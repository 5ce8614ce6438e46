"""Schemathesis hooks for tests/contract/run.sh.

The OpenAPI document states every refusal JSON Schema can express. The ones
below depend on what it cannot: stored state, a relation between two
fields, or which characters beyond ASCII are letters (a pattern that says so
reads differently in ECMA-262 and in Python's `re`; see LETTER_OR_DIGIT in
src/tools/bounds.rs). Each operation's description says so; here each is
listed with its reason, and only a schema-valid request refused with exactly
that error code (and field, where one is named) is accepted. Nothing else is
excluded: every other failure of every check fails the run.
"""

import json

import schemathesis

# (method, path) -> [(error code, field or None, reason)]
STATE_DEPENDENT = {
    ("GET", "/api/v1/tasks"): [
        ("invalid_cursor", None, "a cursor is valid only as this server issued it for this listing (stored state)"),
    ],
    ("GET", "/api/v1/notes"): [
        ("invalid_cursor", None, "a cursor is valid only as this server issued it for this listing (stored state)"),
    ],
    ("GET", "/api/v1/search"): [
        ("invalid_cursor", None, "a cursor is valid only as this server issued it for this query (stored state)"),
    ],
    ("GET", "/api/v1/changes"): [
        ("invalid_cursor", None, "a cursor is valid only as this feed issued it (stored state)"),
        ("cursor_expired", None, "whether a cursor is still in the retained history is stored state"),
    ],
    ("GET", "/api/v1/board"): [
        ("invalid_cursor", None, "a column cursor is valid only as this server issued it (stored state)"),
        ("invalid_input", "cursors.open", "a cursor for a column that `columns` leaves out (relation between two parameters)"),
        ("invalid_input", "cursors.claimed", "a cursor for a column that `columns` leaves out (relation between two parameters)"),
        ("invalid_input", "cursors.done", "a cursor for a column that `columns` leaves out (relation between two parameters)"),
        ("invalid_input", "cursors.cancelled", "a cursor for a column that `columns` leaves out (relation between two parameters)"),
    ],
    ("GET", "/api/v1/notes/{id}"): [
        ("id_prefix_too_short", None, "a key under 6 characters is valid only when it is an existing note's slug (stored state)"),
    ],
    ("PUT", "/api/v1/notes/{id}"): [
        ("id_prefix_too_short", None, "a key under 6 characters is valid only when it is an existing note's slug (stored state)"),
    ],
    ("DELETE", "/api/v1/notes/{id}"): [
        ("id_prefix_too_short", None, "a key under 6 characters is valid only when it is an existing note's slug (stored state)"),
    ],
    ("GET", "/api/v1/graph/neighbours/{id}"): [
        ("id_prefix_too_short", None, "a key under 6 characters is valid only when it is an existing note's slug (stored state)"),
    ],
    ("GET", "/api/v1/graph/path"): [
        ("id_prefix_too_short", None, "a key under 6 characters is valid only when it is an existing note's slug (stored state)"),
    ],
    ("GET", "/api/v1/graph/export"): [
        ("id_prefix_too_short", None, "a key under 6 characters is valid only when it is an existing note's slug (stored state)"),
        ("invalid_input", "depth", "`depth` applies only together with `around` (relation between two parameters)"),
    ],
    ("POST", "/api/v1/links"): [
        ("id_prefix_too_short", None, "a key under 6 characters is valid only when it is an existing note's slug (stored state)"),
        ("invalid_input", "target", "`source` and `target` naming the same node, an edge to itself (relation between two fields, or stored state when two keys name one node)"),
    ],
    ("POST", "/api/v1/notes"): [
        ("content_too_large", None, "the content limit is in bytes and set by the deployment; the schema states it in characters"),
    ],
}

# A note title and a search need a letter or digit of any script; the
# schema's pattern refuses only values with no character beyond ASCII
# punctuation, space and control characters (the part every regex dialect
# reads alike), so a value whose other characters are no letters (`€`, `…`)
# passes it and is refused here.
NO_LETTER_BEYOND_ASCII = "no letter or digit, its only characters beyond ASCII being none (which characters beyond ASCII are letters, no portable pattern can say)"
STATE_DEPENDENT[("POST", "/api/v1/notes")].append(("invalid_input", "title", NO_LETTER_BEYOND_ASCII))
STATE_DEPENDENT.setdefault(("PUT", "/api/v1/notes/{id}"), []).append(("invalid_input", "title", NO_LETTER_BEYOND_ASCII))
STATE_DEPENDENT.setdefault(("GET", "/api/v1/search"), []).append(("invalid_input", "q", NO_LETTER_BEYOND_ASCII))

# Every POST takes `Idempotency-Key`: whether this client already used a key
# on this route, and for which body, is stored state.
ANY_POST = [
    ("idempotency_key_reused", None, "the key was used before by this client on this route for another body (stored state)"),
]
# `If-Match` (RFC 9110) on every write of one entity: whether a tag names the
# entity's current version is stored state, and a tag list naming no version
# that `expected_version` names is a relation between a header and a field.
IF_MATCH_REFUSALS = [
    ("precondition_failed", None, "whether an `If-Match` tag names the entity's current version (stored state)"),
    # The coverage phase sends header values outside the declared pattern
    # as positive data (seen: `If-None-Match: 0`); a malformed If-Match is
    # refused with the same code and field, and nothing is written.
    ("invalid_input", "If-Match", "`If-Match` and `expected_version` naming different versions (relation between a header and a field)"),
]
for _route in [
    ("PATCH", "/api/v1/tasks/{id}"),
    ("POST", "/api/v1/tasks/{id}/claim"),
    ("POST", "/api/v1/tasks/{id}/renew"),
    ("POST", "/api/v1/tasks/{id}/release"),
    ("POST", "/api/v1/tasks/{id}/complete"),
    ("POST", "/api/v1/tasks/{id}/cancel"),
    ("POST", "/api/v1/tasks/{id}/reopen"),
    ("PUT", "/api/v1/notes/{id}"),
    ("DELETE", "/api/v1/notes/{id}"),
]:
    STATE_DEPENDENT.setdefault(_route, []).extend(IF_MATCH_REFUSALS)

# `If-Match` on a read of one entity (RFC 9110 §13.1.1): the same stored
# state decides it; a malformed one is refused as on a write (the coverage
# phase sends `If-Match: 0`, outside the declared pattern, as positive data).
IF_MATCH_READ_REFUSALS = [
    ("precondition_failed", None, "whether an `If-Match` tag names the entity's current version (stored state)"),
    ("invalid_input", "If-Match", "an `If-Match` outside the declared pattern, which the coverage phase sends as positive data"),
]
for _route in [("GET", "/api/v1/tasks/{id}"), ("GET", "/api/v1/notes/{id}")]:
    STATE_DEPENDENT.setdefault(_route, []).extend(IF_MATCH_READ_REFUSALS)


def _error(response):
    try:
        body = json.loads(response.content)
    except (ValueError, TypeError):
        return None
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else None


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keep every failure except a listed state-dependent refusal."""
    if type(failure).__name__ != "RejectedPositiveData":
        return True
    method = case.operation.method.upper()
    # A project's routes refuse as today's (the `default` project's) do.
    path = case.operation.path.replace("/api/v1/projects/{project}/", "/api/v1/", 1)
    allowed = STATE_DEPENDENT.get((method, path), [])
    if method == "POST":
        allowed = allowed + ANY_POST
    error = _error(response) if allowed else None
    if error is None:
        return True
    code = error.get("code")
    field = (error.get("details") or {}).get("field")
    for allowed_code, allowed_field, _reason in allowed:
        if code == allowed_code and (allowed_field is None or field == allowed_field):
            return False
    return True

#!/usr/bin/env python3
"""Hand-made mutants (issue 16, tests/MUTANTS.md): each replaces one exact
string in one file, runs the tests that should catch it, prints caught or
MISSED, and restores the file.

Run it in a scratch checkout, as it edits the tree it runs in:
    git worktree add --detach /tmp/mutants-tree HEAD
    MUTANTS_TREE=/tmp/mutants-tree python3 tests/hand_mutants.py [H1 H2 ...]
CARGO_TARGET_DIR is used as set (default: cargo's own).
"""
import os
import subprocess
import sys
import time

TREE = os.environ.get("MUTANTS_TREE", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = "test(/^store::refusal::/) | test(/^store::model::/)"
TASKS = "test(/^tool_tasks::/)"
R = "src/store/refusal.rs"
T = "src/store/sqlite/tasks.rs"
P = "src/store/postgres/tasks.rs"
# PostgreSQL's mutants run the same store tests on that backend
# (CAIRN_TEST_PG names a database the tests may create schemas in).
ON_PG = {"CAIRN_TEST_BACKEND": "postgres"}
MUTANTS = [
    ("H1", R, '    .detail("holder", holder)\n    .detail("expires_at", expires_at)', '    .detail("holder", holder)',
     "claim_held drops expires_at", ["--lib"], LIB),
    ("H2", R, 'format!("Cannot {operation} a task whose status is `{status}`.")', 'format!("Cannot change a task whose status is `{status}`.")',
     "invalid_transition does not name the operation", ["--lib"], LIB),
    ("H3", R, '                claim_held(&claim.holder, &claim.expires_at)\n            }\n            _ => invalid_transition("claim"',
     '                invalid_transition("claim", status, &["open"])\n            }\n            _ => invalid_transition("claim"',
     "explain(Claim) answers invalid_transition for a live claim", ["--lib"], LIB),
    ("H4", R, '.detail("holder", holder.map_or(Value::Null, Value::from))', '.detail("holder", holder.unwrap_or_default())',
     "claim_not_held(None) says holder \"\" instead of null", ["--lib"], LIB),
    ("H5", R, '.detail("current_version", current_version)', '.detail("current_version", current_version + 1)',
     "version_conflict reports the wrong current_version", ["--lib"], LIB),
    ("H6", R, 'ToolError::new(ErrorCode::TaskNotFound, format!("No task', 'ToolError::new(ErrorCode::NoteNotFound, format!("No task',
     "task_not_found answers note_not_found", ["--lib"], LIB),
    ("H7", R, 'json!({"id": id, "title": title, "source_url": source_url})', 'json!({"id": id, "title": title})',
     "duplicate_of drops source_url", ["--lib"], LIB),
    ("H8", R, '.detail("allowed", json!(allowed))', '.detail("allowed", json!(["open"]))',
     "invalid_transition lists the wrong allowed statuses", ["--lib"], LIB),
    ("H9", T, "OR claim_expires_at <= ?4 OR claim_holder = ?2)", "OR claim_expires_at < ?4 OR claim_holder = ?2)",
     "SQLite claim: a claim expiring exactly now still holds", ["--test", "api"], TASKS),
    ("H10", T, "OR claim_expires_at <= ?4 OR claim_holder = ?3)", "OR claim_expires_at < ?4 OR claim_holder = ?3)",
     "SQLite transition: a claim expiring exactly now still refuses others", ["--test", "api"], TASKS),
    ("H11", T, "AND claim_holder = ?2 AND claim_expires_at > ?4", "AND claim_holder = ?2 AND claim_expires_at >= ?4",
     "SQLite renew: a claim expiring exactly now can still be renewed", ["--test", "api"], TASKS),
    ("H12", T, "WHERE id = ?1 AND status IN ({from})", "WHERE id = ?1",
     "SQLite transition ignores the statuses it may start from", ["--test", "api"], TASKS),
    ("H13", P, "OR claim_expires_at <= $4 OR claim_holder = $2)", "OR claim_expires_at < $4 OR claim_holder = $2)",
     "PostgreSQL claim: a claim expiring exactly now still holds", ["--test", "api"], TASKS, ON_PG),
    ("H14", P, "OR claim_expires_at <= $4 OR claim_holder = $3)", "OR claim_expires_at < $4 OR claim_holder = $3)",
     "PostgreSQL transition: a claim expiring exactly now still refuses others", ["--test", "api"], TASKS, ON_PG),
    ("H15", P, "AND claim_holder = $2 AND claim_expires_at > $4", "AND claim_holder = $2 AND claim_expires_at >= $4",
     "PostgreSQL renew: a claim expiring exactly now can still be renewed", ["--test", "api"], TASKS, ON_PG),
    ("H16", P, "WHERE id = $1 AND status = ANY($6)", "WHERE id = $1",
     "PostgreSQL transition ignores the statuses it may start from", ["--test", "api"], TASKS, ON_PG),
]

only = sys.argv[1:]
for name, path, old, new, what, target, expr, *extra in MUTANTS:
    if only and name not in only:
        continue
    env = {**os.environ, **(extra[0] if extra else {})}
    full = os.path.join(TREE, path)
    text = open(full).read()
    assert text.count(old) == 1, (name, "pattern must match once")
    open(full, "w").write(text.replace(old, new))
    started = time.time()
    try:
        run = subprocess.run(["cargo", "nextest", "run", *target, "-E", expr, "--no-fail-fast"],
                             cwd=TREE, env=env, capture_output=True, text=True)
    finally:
        open(full, "w").write(text)
    out = run.stdout + run.stderr
    failed = [l.split()[-1] for l in out.splitlines() if l.strip().startswith("FAIL [")]
    if "error[E" in out or "could not compile" in out:
        verdict = "unviable"
    elif run.returncode != 0 and failed:
        verdict = "caught"
    elif run.returncode == 0:
        verdict = "MISSED"
    else:
        verdict = f"error rc={run.returncode}"
    print(f"{name} {verdict} ({time.time()-started:.0f}s) {path}: {what}; failing: {', '.join(sorted(set(failed))[:4])}", flush=True)

//! Prompts for cairn's everyday work, each made from live data by the tools
//! an agent would call itself (at the agent tier):
//!
//! - `claim_next_task` (`agent`, optional `tag`): the open tasks, most urgent
//!   first, and how to claim one;
//! - `hand_over_task` (`task`, `agent`, optional `to`): the task, and the
//!   steps to hand it over with a note (write, link, release);
//! - `summarise_board_changes` (optional `since`, a change-feed cursor): the
//!   feed's events since then, to be summarised for a person.

use rmcp::RoleServer;
use rmcp::model::{GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use super::{CairnMcp, Failure};
use crate::envelope::{ErrorCode, ToolError};
use crate::store::{ChangeEvent, Priority, Task};
use crate::tools::registry;

/// Events a summary covers when no `since` is given.
const RECENT_EVENTS: i64 = 50;
/// Open tasks a `claim_next_task` prompt lists.
const CANDIDATES: usize = 10;

struct PromptDef {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    /// `(name, description, required)`.
    arguments: &'static [(&'static str, &'static str, bool)],
}

const PROMPTS: [PromptDef; 3] = [
    PromptDef {
        name: "claim_next_task",
        title: "Pick and claim the next task",
        description: "The open tasks, most urgent first, and how to claim one for an agent.",
        arguments: &[
            ("agent", "The agent that will claim the task.", true),
            ("tag", "Only tasks with this tag.", false),
        ],
    },
    PromptDef {
        name: "hand_over_task",
        title: "Hand over a claimed task",
        description: "Steps to hand a claimed task over: a handover note, linked to the task, then the claim released.",
        arguments: &[
            (
                "task",
                "The task: full id or a unique prefix of 6+ characters.",
                true,
            ),
            ("agent", "The agent that holds the claim.", true),
            ("to", "The agent taking it over, if known.", false),
        ],
    },
    PromptDef {
        name: "summarise_board_changes",
        title: "Summarise what changed on the board",
        description: "The change feed's events since a cursor (default: the latest 50), to summarise for a person.",
        arguments: &[(
            "since",
            "A change-feed cursor (`next_cursor` of `changes_since`, or the `next_cursor` this prompt ends with).",
            false,
        )],
    },
];

/// The prompts, as `prompts/list` shows them.
pub(super) fn list() -> Vec<Prompt> {
    PROMPTS
        .iter()
        .map(|p| {
            let arguments = p
                .arguments
                .iter()
                .map(|(name, description, required)| {
                    PromptArgument::new(*name)
                        .with_description(*description)
                        .with_required(*required)
                })
                .collect();
            Prompt::new(p.name, Some(p.description), Some(arguments)).with_title(p.title)
        })
        .collect()
}

/// Names of the prompt's arguments (completion uses them).
pub(super) fn argument_names(prompt: &str) -> Option<impl Iterator<Item = &'static str>> {
    let def = PROMPTS.iter().find(|p| p.name == prompt)?;
    Some(def.arguments.iter().map(|(name, _, _)| *name))
}

fn refuse(error: ToolError) -> Failure {
    Failure::new("prompts/get", error)
}

/// The arguments as strings, checked against the prompt's declaration.
struct Args<'a>(&'a JsonObject);

impl Args<'_> {
    fn check(&self, def: &PromptDef) -> Result<(), Failure> {
        let names = || def.arguments.iter().map(|(n, _, _)| *n);
        for key in self.0.keys() {
            if !names().any(|n| n == key) {
                return Err(refuse(
                    ToolError::new(
                        ErrorCode::UnknownField,
                        format!("Unknown argument `{key}`."),
                    )
                    .detail("field", key.as_str())
                    .suggest(registry::nearest(key, names())),
                ));
            }
        }
        for (name, _, required) in def.arguments {
            if *required && self.get(name).is_none() {
                return Err(refuse(
                    ToolError::new(ErrorCode::MissingField, format!("`{name}` is required."))
                        .detail("field", *name),
                ));
            }
        }
        Ok(())
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }
}

/// One prompt, filled in.
pub(super) async fn get(
    mcp: &CairnMcp,
    name: &str,
    arguments: &JsonObject,
    context: &RequestContext<RoleServer>,
) -> Result<GetPromptResult, Failure> {
    let Some(def) = PROMPTS.iter().find(|p| p.name == name) else {
        return Err(refuse(
            ToolError::invalid_input("name", format!("no prompt is called `{name}`"))
                .suggest(registry::nearest(name, PROMPTS.iter().map(|p| p.name))),
        ));
    };
    let args = Args(arguments);
    args.check(def)?;
    let text = match def.name {
        "claim_next_task" => claim_next_task(mcp, &args, context).await?,
        "hand_over_task" => hand_over_task(mcp, &args, context).await?,
        _ => summarise_board_changes(mcp, &args, context).await?,
    };
    let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]);
    result.description = Some(def.description.to_owned());
    Ok(result)
}

fn decoded<T: serde::de::DeserializeOwned>(tool: &str, value: Value) -> Result<T, Failure> {
    serde_json::from_value(value).map_err(|error| {
        tracing::error!(tool, %error, "a tool's data did not decode as its output type");
        Failure::new(tool, ToolError::internal())
    })
}

fn urgency(priority: Priority) -> u8 {
    match priority {
        Priority::Urgent => 0,
        Priority::High => 1,
        Priority::Normal => 2,
        Priority::Low => 3,
    }
}

fn task_line(task: &Task) -> String {
    let tags = if task.tags.is_empty() {
        String::new()
    } else {
        format!(" (tags: {})", task.tags.join(", "))
    };
    format!(
        "- `{}` [{}] {}{tags}",
        task.id,
        task.priority.as_str(),
        task.title
    )
}

async fn claim_next_task(
    mcp: &CairnMcp,
    args: &Args<'_>,
    context: &RequestContext<RoleServer>,
) -> Result<String, Failure> {
    let agent = args.get("agent").unwrap_or_default();
    let mut query = json!({"status": "open", "limit": 100});
    if let Some(tag) = args.get("tag") {
        query["tag"] = json!(tag);
    }
    let answer = mcp.agent_call("task_list", query, context).await?;
    let page: crate::tools::tasks::TaskPage = decoded("task_list", answer.data)?;
    let mut tasks = page.items;
    // Stable: within a priority, the most recently updated first (the list's order).
    tasks.sort_by_key(|t| urgency(t.priority));
    let scope = args
        .get("tag")
        .map(|t| format!(" tagged `{t}`"))
        .unwrap_or_default();
    if tasks.is_empty() {
        return Ok(format!(
            "You are agent `{agent}`. There are no open tasks{scope} on cairn's board right now: \
             say so, and do not claim anything."
        ));
    }
    let shown: Vec<String> = tasks.iter().take(CANDIDATES).map(task_line).collect();
    Ok(format!(
        "You are agent `{agent}`. Pick the next task from cairn's board and claim it.\n\n\
         Open tasks{scope}, most urgent first ({} of {}):\n{}\n\n\
         Claim the first one you can do with the `task_claim` tool: \
         {{\"id\": \"<id>\", \"agent\": \"{agent}\"}}. If the answer's `error.code` is \
         `claim_held`, another agent was faster: take the next one. Read a task first with \
         `task_get` (or the resource cairn://tasks/<id>) when its title is not enough. \
         Renew the claim with `task_renew` while you work, and finish with `task_complete`.",
        shown.len(),
        page.total,
        shown.join("\n"),
    ))
}

async fn hand_over_task(
    mcp: &CairnMcp,
    args: &Args<'_>,
    context: &RequestContext<RoleServer>,
) -> Result<String, Failure> {
    let agent = args.get("agent").unwrap_or_default();
    let key = args.get("task").unwrap_or_default();
    let answer = mcp
        .agent_call("task_get", json!({"id": key}), context)
        .await?;
    let task: Task = decoded("task_get", answer.data)?;
    let holder = task.claim.as_ref().map(|c| c.holder.as_str());
    let standing = match holder {
        Some(h) if h == agent => format!("You hold its claim (until {}).", claim_expiry(&task)),
        Some(h) => format!(
            "Careful: the claim is held by `{h}`, not by you; only the holder can release it."
        ),
        None => "Nobody holds a claim on it now; skip the release step.".to_owned(),
    };
    let to = args
        .get("to")
        .map(|t| format!(" for `{t}`"))
        .unwrap_or_default();
    let next = args
        .get("to")
        .map(|t| format!(" `{t}` can then claim it with `task_claim`."))
        .unwrap_or_default();
    Ok(format!(
        "You are agent `{agent}`, handing over task `{id}` \"{title}\" ({status}, {priority} \
         priority). {standing}\n\nDescription:\n{description}\n\n\
         1. Write a handover note{to} with `note_write`: title \"Handover: {title}\"; in the \
         content, what is done, what is left, where the work is, and what to watch out for.\n\
         2. Link it to the task with `link_add`: {{\"source\": \"<the note's id>\", \"target\": \
         \"{id}\", \"kind\": \"relates_to\"}}.\n\
         3. Release the claim with `task_release`: {{\"id\": \"{id}\", \"agent\": \"{agent}\"}}.{next}",
        id = task.id,
        title = task.title,
        status = task.status.as_str(),
        priority = task.priority.as_str(),
        description = if task.description.is_empty() {
            "(none)"
        } else {
            &task.description
        },
    ))
}

fn claim_expiry(task: &Task) -> &str {
    task.claim
        .as_ref()
        .map(|c| c.expires_at.as_str())
        .unwrap_or("it expires")
}

fn event_line(event: &ChangeEvent) -> String {
    let by = event
        .agent
        .as_ref()
        .map(|a| format!(" by `{a}`"))
        .unwrap_or_default();
    format!(
        "- #{} {} {} {} `{}` \"{}\"{by}",
        event.seq,
        event.at,
        event.kind.as_str(),
        event.entity.kind.as_str(),
        event.entity.id,
        event.entity.title,
    )
}

async fn summarise_board_changes(
    mcp: &CairnMcp,
    args: &Args<'_>,
    context: &RequestContext<RoleServer>,
) -> Result<String, Failure> {
    let cursor = match args.get("since") {
        Some(since) => since.to_owned(),
        None => {
            let head = *mcp.cairn.store().watch_changes().borrow();
            (head - RECENT_EVENTS).max(0).to_string()
        }
    };
    let answer = mcp
        .agent_call(
            "changes_since",
            json!({"cursor": cursor, "limit": 200}),
            context,
        )
        .await?;
    let page: crate::tools::changes::ChangesPage = decoded("changes_since", answer.data)?;
    let lines: Vec<String> = page.events.iter().map(event_line).collect();
    let more = if page.has_more {
        " More events follow: get this prompt again with `since` set to the cursor below."
    } else {
        ""
    };
    let body = if lines.is_empty() {
        "(nothing changed)".to_owned()
    } else {
        lines.join("\n")
    };
    Ok(format!(
        "Summarise for a person watching cairn's board what changed since feed position \
         {cursor}: group the events by task and note, say who did what, and call out claims \
         taken or released, tasks completed, cancelled or reopened, and notes written or \
         deleted. Be brief.{more}\n\nEvents, oldest first:\n{body}\n\nNext cursor: {next}",
        next = page.next_cursor,
    ))
}

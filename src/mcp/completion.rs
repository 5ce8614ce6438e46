//! `completion/complete` for prompt arguments and resource template
//! variables: task id prefixes, note slugs, tags, agent names and statuses,
//! each matched by prefix (case-insensitive) against what the tools list.
//!
//! Sources are one page of each list (the newest 500 tasks and notes, the
//! latest 500 change-feed events for agent names); when a source had more,
//! `hasMore` is true and `total` is left out rather than guessed.

use std::collections::BTreeSet;

use rmcp::model::{CompleteRequestParams, CompletionInfo, Reference};
use serde_json::{Value, json};

use super::resources::{COLUMN_TEMPLATE, NOTE_TEMPLATE, TASK_TEMPLATE};
use super::{CairnMcp, Failure, prompts};
use crate::envelope::{ErrorCode, ToolError};
use crate::store::TaskStatus;
use crate::tools::registry;

/// Items read from each source.
const SOURCE_PAGE: i64 = 500;

/// What a value is completed from.
#[derive(Clone, Copy)]
enum Source {
    TaskIds,
    Slugs,
    Tags,
    Agents,
    Statuses,
    /// Free text (a feed cursor): nothing to offer.
    Nothing,
}

fn refuse(error: ToolError) -> Failure {
    Failure::new("completion/complete", error)
}

fn source_for(reference: &Reference, argument: &str) -> Result<Source, Failure> {
    let unknown = |names: Vec<&str>| {
        refuse(
            ToolError::new(
                ErrorCode::UnknownField,
                format!("There is no argument `{argument}` to complete here."),
            )
            .detail("field", argument)
            .suggest(registry::nearest(argument, names.into_iter())),
        )
    };
    match reference {
        Reference::Prompt(prompt) => {
            let Some(names) = prompts::argument_names(&prompt.name) else {
                return Err(refuse(ToolError::invalid_input(
                    "ref",
                    format!("no prompt is called `{}`", prompt.name),
                )));
            };
            let names: Vec<&str> = names.collect();
            match argument {
                "agent" | "to" if names.contains(&argument) => Ok(Source::Agents),
                "tag" if names.contains(&argument) => Ok(Source::Tags),
                "task" if names.contains(&argument) => Ok(Source::TaskIds),
                "since" if names.contains(&argument) => Ok(Source::Nothing),
                _ => Err(unknown(names)),
            }
        }
        Reference::Resource(template) => match (template.uri.as_str(), argument) {
            (TASK_TEMPLATE, "id") => Ok(Source::TaskIds),
            (NOTE_TEMPLATE, "slug") => Ok(Source::Slugs),
            (COLUMN_TEMPLATE, "status") => Ok(Source::Statuses),
            (TASK_TEMPLATE, _) => Err(unknown(vec!["id"])),
            (NOTE_TEMPLATE, _) => Err(unknown(vec!["slug"])),
            (COLUMN_TEMPLATE, _) => Err(unknown(vec!["status"])),
            (uri, _) => Err(refuse(ToolError::invalid_input(
                "ref",
                format!("`{uri}` is not one of this server's resource templates"),
            ))),
        },
        _ => Err(refuse(ToolError::invalid_input(
            "ref",
            "only ref/prompt and ref/resource can be completed",
        ))),
    }
}

/// Candidate values, and whether the source was read in full.
async fn candidates(mcp: &CairnMcp, source: Source) -> Result<(Vec<String>, bool), Failure> {
    let page = json!({"limit": SOURCE_PAGE});
    let complete = |data: &Value| data["next_cursor"].is_null();
    let strings = |items: &Value, key: &str| -> Vec<String> {
        items
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|i| i[key].as_str().map(str::to_owned))
            .collect()
    };
    Ok(match source {
        Source::Nothing => (Vec::new(), true),
        Source::Statuses => (
            TaskStatus::ALL
                .iter()
                .map(|s| s.as_str().to_owned())
                .collect(),
            true,
        ),
        Source::TaskIds => {
            let tasks = mcp.lookup("task_list", page).await?;
            (strings(&tasks["items"], "id"), complete(&tasks))
        }
        Source::Slugs => {
            let notes = mcp.lookup("note_list", page).await?;
            (strings(&notes["items"], "slug"), complete(&notes))
        }
        Source::Tags => {
            let tasks = mcp.lookup("task_list", page.clone()).await?;
            let notes = mcp.lookup("note_list", page).await?;
            let tags: BTreeSet<String> = [&tasks, &notes]
                .iter()
                .flat_map(|list| list["items"].as_array().into_iter().flatten())
                .flat_map(|item| item["tags"].as_array().into_iter().flatten())
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect();
            (
                tags.into_iter().collect(),
                complete(&tasks) && complete(&notes),
            )
        }
        Source::Agents => {
            let claimed = mcp
                .lookup(
                    "task_list",
                    json!({"status": "claimed", "limit": SOURCE_PAGE}),
                )
                .await?;
            let head = *mcp.cairn.store().watch_changes().borrow();
            let cursor = (head - SOURCE_PAGE).max(0).to_string();
            let feed = mcp
                .lookup(
                    "changes_since",
                    json!({"cursor": cursor, "limit": SOURCE_PAGE}),
                )
                .await?;
            let holders = claimed["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["claim"]["holder"].as_str().map(str::to_owned));
            let actors = feed["events"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e["agent"].as_str().map(str::to_owned));
            let agents: BTreeSet<String> = holders.chain(actors).collect();
            (
                agents.into_iter().collect(),
                complete(&claimed) && head <= SOURCE_PAGE,
            )
        }
    })
}

/// The values that start with the typed prefix, at most 100.
pub(super) async fn complete(
    mcp: &CairnMcp,
    request: &CompleteRequestParams,
) -> Result<CompletionInfo, Failure> {
    let source = source_for(&request.r#ref, &request.argument.name)?;
    let (values, whole) = candidates(mcp, source).await?;
    let typed = request.argument.value.to_lowercase();
    let matching: Vec<String> = values
        .into_iter()
        .filter(|v| v.to_lowercase().starts_with(&typed))
        .collect();
    let cut = matching.len() > CompletionInfo::MAX_VALUES;
    let total = whole.then_some(u32::try_from(matching.len()).unwrap_or(u32::MAX));
    let shown = matching
        .into_iter()
        .take(CompletionInfo::MAX_VALUES)
        .collect();
    CompletionInfo::with_pagination(shown, total, cut || !whole)
        .map_err(|_| refuse(ToolError::internal()))
}

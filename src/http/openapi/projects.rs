//! Every route of a project under `/api/v1/projects/{project}/...`: the
//! operations of today's `/api/v1/...` routes (the `default` project's),
//! each copied once more with the `project` path parameter first and
//! `_in_project` after its operation id. Last of the passes, so a copy
//! carries everything the others added. The registry's own routes and the
//! error pages belong to no project and are not copied.

use utoipa::Modify;
use utoipa::openapi::OpenApi;
use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
use utoipa::openapi::{RefOr, Required};

use super::{methods, string};
use crate::store::KEY_MAX;

/// Copies each project route.
pub struct InProjects;

/// The `project` path parameter every copied operation takes first.
fn project_parameter() -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name("project")
        .parameter_in(ParameterIn::Path)
        .required(Required::True)
        .description(Some(
            "The project's key; `project_not_found` (404) when there is none or your token may not use it.",
        ))
        .schema(Some(RefOr::T(string(
            KEY_MAX as u64,
            Some("^[a-z0-9-]{1,64}$"),
        ))))
        .build()
}

/// The path of `path`'s copy in a project, when it has one.
pub fn in_project(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/api/v1/")?;
    if rest.starts_with("projects") || rest.starts_with("errors") {
        return None;
    }
    Some(format!("/api/v1/projects/{{project}}/{rest}"))
}

impl Modify for InProjects {
    fn modify(&self, doc: &mut OpenApi) {
        let copies: Vec<_> = doc
            .paths
            .paths
            .iter()
            .filter_map(|(path, item)| Some((in_project(path)?, item.clone())))
            .collect();
        for (path, mut item) in copies {
            for (_, op) in methods(&mut item) {
                if let Some(id) = &mut op.operation_id {
                    id.push_str("_in_project");
                }
                op.parameters
                    .get_or_insert_with(Vec::new)
                    .insert(0, RefOr::T(project_parameter()));
            }
            doc.paths.paths.insert(path, item);
        }
    }
}

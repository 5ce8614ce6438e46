//! The REST request bodies: what a tool's input becomes when the URL names
//! the entity, and the two bodies whose rules utoipa cannot derive.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use utoipa::Modify;
use utoipa::openapi::schema::{AdditionalProperties, Object, SchemaType, Type};
use utoipa::openapi::{Components, OpenApi, Ref, RefOr, Required, Schema};

use super::{body_ref, keyword, operations, schema_name};

/// REST bodies never carry the target `id` (the URL names the entity), and
/// note create and replace are different bodies. Every body starts out
/// required; [`super::bounds::InputBounds`] says which need not be.
pub(super) struct Bodies;

impl Modify for Bodies {
    fn modify(&self, doc: &mut OpenApi) {
        let mut bodies = BTreeSet::new();
        for (_, _, op) in operations(&mut doc.paths) {
            if let Some(RefOr::T(body)) = &mut op.request_body {
                body.required = Some(Required::True);
            }
            if let Some(reference) = body_ref(op) {
                bodies.insert(reference.ref_location.clone());
            }
        }
        let components = doc.components.get_or_insert_with(Default::default);
        let renamed: BTreeMap<String, Ref> = bodies
            .iter()
            .filter_map(|location| Some((location.clone(), strip_id(components, location)?)))
            .collect();
        for (_, _, op) in operations(&mut doc.paths) {
            if let Some(reference) = body_ref(op)
                && let Some(stripped) = renamed.get(&reference.ref_location)
            {
                *reference = stripped.clone();
            }
        }
        drop_unreferenced(doc, renamed.keys());
        split_note_bodies(doc);
    }
}

/// A body typed by a tool input `X` with an `id` field is documented as
/// `XBody`, the same schema without it.
fn strip_id(components: &mut Components, location: &str) -> Option<Ref> {
    let name = location.strip_prefix("#/components/schemas/")?;
    let Some(RefOr::T(Schema::Object(input))) = components.schemas.get(name) else {
        return None;
    };
    if !input.properties.contains_key("id") {
        return None;
    }
    let mut stripped = input.clone();
    stripped.properties.shift_remove("id");
    stripped.required.retain(|field| field != "id");
    let body_name = format!("{name}Body");
    components
        .schemas
        .insert(body_name.clone(), RefOr::T(Schema::Object(stripped)));
    Some(Ref::from_schema_name(body_name))
}

/// Removes the schemas at `locations` that nothing references any more.
fn drop_unreferenced<'a>(doc: &mut OpenApi, locations: impl Iterator<Item = &'a String>) {
    let text = serde_json::to_string(&*doc).unwrap_or_default();
    let unused: Vec<String> = locations
        .filter(|location| !text.contains(&format!("\"{location}\"")))
        .filter_map(|location| location.strip_prefix("#/components/schemas/"))
        .map(str::to_owned)
        .collect();
    if let Some(components) = &mut doc.components {
        for name in unused {
            components.schemas.remove(&name);
        }
    }
}

/// `POST /notes` creates and `PUT /notes/{id}` replaces: the create body is
/// the replace body without `expected_version`, which only a replace takes.
fn split_note_bodies(doc: &mut OpenApi) {
    let Some(create) = doc
        .paths
        .paths
        .get_mut("/api/v1/notes")
        .and_then(|item| item.post.as_mut())
    else {
        return;
    };
    let Some(reference) = body_ref(create) else {
        return;
    };
    let Some(name) = schema_name(reference).map(str::to_owned) else {
        return;
    };
    *reference = Ref::from_schema_name("NoteCreateBody");
    let schemas = &mut doc.components.get_or_insert_with(Default::default).schemas;
    let Some(mut body) = schemas.get(&name).cloned() else {
        return;
    };
    if let RefOr::T(Schema::Object(object)) = &mut body {
        object.properties.shift_remove("expected_version");
        object.properties.shift_remove("id");
    }
    schemas.insert("NoteCreateBody".into(), body);
}

/// `task_update` with nothing to change is `invalid_input`: the body names at
/// least one of the fields it changes, with a value (null changes nothing),
/// so it is required. Each `anyOf` branch is the whole body with one of them
/// required, so a generated client gets one complete type per branch.
///
/// Runs after [`super::bounds::InputBounds`], so the branches carry the
/// bounds of the body they repeat.
pub(super) struct UpdateNamesAChange;

const UPDATE_BODY: &str = "TaskUpdateInputBody";

/// The bodies of updates, each with the fields one of which it must name.
const UPDATE_BODIES: &[(&str, &[&str])] = &[
    (UPDATE_BODY, &["title", "description", "tags", "priority"]),
    ("ProjectChange", &["name", "archived"]),
];

impl Modify for UpdateNamesAChange {
    fn modify(&self, doc: &mut OpenApi) {
        for (name, fields) in UPDATE_BODIES {
            names_a_change(doc, name, fields);
        }
    }
}

/// The body schema `name` holds at least one of `fields`, not null, and
/// every operation taking it requires it.
fn names_a_change(doc: &mut OpenApi, name: &str, fields: &[&str]) {
    let schemas = &mut doc.components.get_or_insert_with(Default::default).schemas;
    let Some(RefOr::T(Schema::Object(update))) = schemas.get_mut(name) else {
        return;
    };
    let branches: Vec<Value> = fields
        .iter()
        .filter_map(|field| {
            let mut properties = update.properties.clone();
            let present = without_null(properties.get(*field)?);
            properties.insert((*field).to_owned(), present);
            let mut branch = Object::with_type(Type::Object);
            branch.required = vec![(*field).to_owned()];
            branch.properties = properties;
            branch.additional_properties = Some(Box::new(AdditionalProperties::FreeForm(false)));
            serde_json::to_value(Schema::Object(branch)).ok()
        })
        .collect();
    keyword(&mut update.extensions, "anyOf", Value::Array(branches));
    for (_, _, op) in operations(&mut doc.paths) {
        let names_update =
            body_ref(op).is_some_and(|reference| schema_name(reference) == Some(name));
        if names_update && let Some(RefOr::T(body)) = &mut op.request_body {
            body.required = Some(Required::True);
        }
    }
}

/// A property schema that refuses null: `type: [T, "null"]` loses `"null"`,
/// a `oneOf`/`anyOf` loses its null branch.
fn without_null(property: &RefOr<Schema>) -> RefOr<Schema> {
    fn not_null(schema_type: &mut SchemaType) {
        if let SchemaType::Array(types) = schema_type {
            types.retain(|t| *t != Type::Null);
            if let [only] = types.as_slice() {
                *schema_type = SchemaType::Type(only.clone());
            }
        }
    }
    fn is_null(branch: &RefOr<Schema>) -> bool {
        matches!(branch, RefOr::T(Schema::Object(o)) if o.schema_type == SchemaType::Type(Type::Null))
    }
    let mut out = property.clone();
    let branches = match &mut out {
        RefOr::T(Schema::Object(object)) => {
            not_null(&mut object.schema_type);
            return out;
        }
        RefOr::T(Schema::Array(array)) => {
            not_null(&mut array.schema_type);
            return out;
        }
        RefOr::T(Schema::OneOf(one_of)) => &one_of.items,
        RefOr::T(Schema::AnyOf(any_of)) => &any_of.items,
        _ => return out,
    };
    let kept: Vec<&RefOr<Schema>> = branches.iter().filter(|b| !is_null(b)).collect();
    match kept.as_slice() {
        [only] => (*only).clone(),
        _ => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder};

    #[test]
    fn a_present_field_refuses_null_whichever_way_null_was_allowed() {
        let nullable = ObjectBuilder::new()
            .schema_type(SchemaType::Array(vec![Type::String, Type::Null]))
            .max_length(Some(3))
            .build();
        let RefOr::T(Schema::Object(present)) = without_null(&RefOr::T(Schema::Object(nullable)))
        else {
            panic!("an object stays an object");
        };
        assert!(present.schema_type == SchemaType::Type(Type::String));
        assert_eq!(present.max_length, Some(3), "its bounds stay");

        let enum_or_null = OneOfBuilder::new()
            .item(Ref::from_schema_name("Priority"))
            .item(ObjectBuilder::new().schema_type(Type::Null))
            .build();
        let present = without_null(&RefOr::T(Schema::OneOf(enum_or_null)));
        assert!(present == RefOr::Ref(Ref::from_schema_name("Priority")));
    }
}

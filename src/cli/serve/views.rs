//! The routes serve's page adds to the API: the report (`GET /v1/report`), a cluster's members
//! with how each was linked (`GET /v1/clusters/{similar_id}/members`), and a query's sentences
//! marked with the matches that hold them (`"sentences": true` in `POST /v1/query`).

use std::sync::Arc;
use std::time::Instant;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use serde::Serialize;

use fpdb::report::{Report, ReportOptions, ReportScan};
use fpdb::Outcome;

use super::error::{found_or_404, json, Answer, ApiError};
use super::pools::{on_cpu, read_db};
use super::request::{cluster_id, limit};
use super::Shared;

type Db = Arc<Shared>;

/// One sentence of a looked-up text and the matched documents that hold it (`"sentences":
/// true` in `POST /v1/query`).
#[derive(Serialize)]
pub(super) struct Sentence {
    text: String,
    counted: bool,
    shared: Vec<String>,
}

/// The sentences of `text` as fingerprinted (shown as `text` writes them), each with the ids of
/// the matched documents of `o` whose stored sketches hold it.
pub(super) fn marked(s: &Shared, text: &str, o: &Outcome) -> fpdb::Result<Vec<Sentence>> {
    let mut ids: Vec<&str> = Vec::new();
    for m in &o.matches {
        if !ids.contains(&m.id.as_str()) {
            ids.push(&m.id);
        }
    }
    let db =
        s.db.read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut sketches = Vec::with_capacity(ids.len());
    for id in &ids {
        sketches.push(db.searcher().sentence_sketch(id)?.unwrap_or_default());
    }
    drop(db);
    let views: Vec<&[u32]> = sketches.iter().map(Vec::as_slice).collect();
    let normalized = s.fingerprinter.prepare(text);
    Ok(fpdb::explain::marked_original_sentences(
        text,
        &normalized,
        s.fingerprinter.options(),
        &views,
    )
    .into_iter()
    .map(|m| Sentence {
        text: m.text,
        counted: m.counted,
        shared: m.shared.into_iter().map(|i| ids[i].to_string()).collect(),
    })
    .collect())
}

/// How long a report is served again before the store is read for a new one.
const REPORT_FRESH: std::time::Duration = std::time::Duration::from_secs(30);

/// `GET /v1/report`: what `fpdb report --json` prints, of one state of the store. Made a
/// chunk of records at a time, the store's lock taken for each chunk only, so that writes go
/// on between them; when a write came between two chunks the chunks saw two states, and the
/// report is made again under one lock (writes wait for it). One report at a time, served
/// again for 30 s.
pub(super) async fn report(State(s): State<Db>) -> Answer {
    let mut cached = s.report.lock().await;
    if let Some((at, r)) = &*cached {
        if at.elapsed() < REPORT_FRESH {
            return json(&**r);
        }
    }
    let r = match report_in_steps(&s).await? {
        Some(r) => r,
        None => {
            read_db(s.clone(), |db| {
                db.searcher().report(ReportOptions::default())
            })
            .await?
        }
    };
    let r = Arc::new(r);
    *cached = Some((Instant::now(), r.clone()));
    json(&*r)
}

/// The report made a chunk at a time, or None when the store was written between two chunks.
async fn report_in_steps(s: &Db) -> Result<Option<Report>, ApiError> {
    let mut scan = ReportScan::new(ReportOptions::default());
    let mut writes = None;
    loop {
        let db = s.clone();
        let (more, back, now) = on_cpu(move || {
            let store = db
                .db
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let more = scan.step(&store.searcher());
            (more, scan, store.meters().writes)
        })
        .await?;
        scan = back;
        if *writes.get_or_insert(now) != now {
            return Ok(None);
        }
        if !more.map_err(ApiError::store)? {
            break;
        }
    }
    let r = read_db(s.clone(), move |db| {
        Ok((db.meters().writes, scan.finish(&db.searcher())?))
    })
    .await?;
    Ok((Some(r.0) == writes).then_some(r.1))
}

/// `GET /v1/clusters/{similar_id}/members?limit=N`: the cluster with its first N members (100
/// by default) and its original, each with URL, title, times and what linked it.
pub(super) async fn cluster_members(
    State(s): State<Db>,
    id: Result<Path<u64>, PathRejection>,
    RawQuery(q): RawQuery,
) -> Answer {
    let id = cluster_id(id)?;
    let limit = limit(&q, 100)?;
    // Link ids are cut as the member list is made (`fpdb::report::MAX_LINK_ID_CHARS`).
    let found = read_db(s, move |db| db.searcher().cluster_detail(id, limit)).await?;
    found_or_404(found, || format!("no cluster has the similar_id {id}"))
}

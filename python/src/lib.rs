//! `fpdb._native`: the store for Python. Thin: every call is one library call; results cross
//! as JSON text (the same objects the CLI prints), turned into dicts by `fpdb/__init__.py`.
//! Fingerprinting, lookups and writes run with the GIL released.

use std::sync::Mutex;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

use fpdb::{Document, Fpdb, IngestResult, OnExisting, Settings};

create_exception!(
    _native,
    FpdbError,
    PyException,
    "An fpdb error (base class)."
);
create_exception!(
    _native,
    LockedError,
    FpdbError,
    "Another process writes to the store."
);
create_exception!(
    _native,
    SettingsError,
    FpdbError,
    "Settings differ from the store's, or are invalid."
);
create_exception!(
    _native,
    NotFoundError,
    FpdbError,
    "There is no store at the path."
);
create_exception!(
    _native,
    InputError,
    FpdbError,
    "A document that cannot be ingested."
);

fn err(e: fpdb::Error) -> PyErr {
    let msg = e.to_string();
    match e {
        fpdb::Error::Locked { .. } => LockedError::new_err(msg),
        fpdb::Error::NotFound { .. } => NotFoundError::new_err(msg),
        fpdb::Error::OptionsMismatch { .. } | fpdb::Error::InvalidOption(_) => {
            SettingsError::new_err(msg)
        }
        _ => FpdbError::new_err(msg),
    }
}

fn json<T: serde::Serialize>(v: &T) -> PyResult<String> {
    serde_json::to_string(v).map_err(|e| FpdbError::new_err(e.to_string()))
}

/// A setting's Python value (bool, int, float, str, or a list of them) as JSON.
fn json_value(v: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    use serde_json::Value;
    if let Ok(b) = v.downcast::<pyo3::types::PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = v.extract::<i64>() {
        return Ok(Value::from(i));
    }
    if let Ok(f) = v.extract::<f64>() {
        return Ok(Value::from(f));
    }
    if let Ok(t) = v.extract::<String>() {
        return Ok(Value::String(t));
    }
    if let Ok(items) = v.extract::<Vec<Bound<'_, PyAny>>>() {
        return items
            .iter()
            .map(json_value)
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array);
    }
    Err(PyTypeError::new_err(format!(
        "a setting's value cannot be {}",
        v.get_type()
    )))
}

/// Settings from keyword arguments (the CLI's flag names with `_`): `algos`, `weight_check`,
/// and every other by name through [`Settings::set_named`].
fn settings(kw: Option<&Bound<'_, PyDict>>) -> PyResult<Settings> {
    let mut s = Settings::default();
    let Some(kw) = kw else { return Ok(s) };
    for (k, v) in kw.iter() {
        let key: String = k.extract()?;
        match key.as_str() {
            "algos" => {
                let names: Vec<String> = match v.extract::<String>() {
                    Ok(one) => one.split(',').map(|x| x.trim().to_string()).collect(),
                    Err(_) => v.extract()?,
                };
                s.set_algos(&names).map_err(err)?;
            }
            "weight_check" => s.set_weight_check(v.extract()?).map_err(err)?,
            other => {
                if !s.set_named(other, json_value(&v)?).map_err(err)? {
                    return Err(PyTypeError::new_err(format!(
                        "unknown setting `{other}` (known: algos, weight_check, {})",
                        Settings::names().join(", ")
                    )));
                }
            }
        }
    }
    Ok(s)
}

/// A document from Python values, checked as the JSONL reader checks one.
/// A document as the Python side hands it over: id, text, title, url, publication time,
/// publisher.
type PyDoc = (
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// A document from Python values, read as a JSONL line is; a publication time that is not
/// one is an error here (the caller passed it explicitly).
fn document((id, text, title, url, date, publisher): PyDoc) -> PyResult<Document> {
    let mut obj = serde_json::Map::new();
    obj.insert("id".into(), id.into());
    obj.insert("text".into(), text.into());
    if let Some(d) = date {
        obj.insert("date".into(), d.into());
    }
    let mut doc = fpdb::reader::document_from_json(&obj, &Default::default(), String::new)
        .map_err(InputError::new_err)?;
    fpdb::reader::PublishedWindow::default().apply(&mut doc);
    if let Some(w) = doc.time_unread.take() {
        return Err(InputError::new_err(format!("document `{}`: {w}", doc.id)));
    }
    doc.title = title;
    doc.url = url;
    doc.publisher = publisher;
    Ok(doc)
}

/// The documents of a Python iterator of chunks (lists of document tuples), as records of
/// the ingest pipeline, read on its reading thread (which takes the GIL for each chunk). The
/// first chunk that cannot be read ends them; its error waits in `refused`.
struct Chunks {
    iter: Py<pyo3::types::PyIterator>,
    ready: std::collections::VecDeque<Document>,
    items: u64,
    refused: std::sync::Arc<Mutex<Option<PyErr>>>,
}

impl Chunks {
    /// The next chunk's documents, converted whole; None at the end or at the first error.
    fn read_chunk(&self) -> Option<Vec<Document>> {
        let read = Python::with_gil(|py| -> PyResult<Option<Vec<Document>>> {
            let Some(chunk) = self.iter.bind(py).clone().next() else {
                return Ok(None);
            };
            let docs: Vec<PyDoc> = chunk?.extract()?;
            docs.into_iter()
                .map(document)
                .collect::<PyResult<_>>()
                .map(Some)
        });
        read.unwrap_or_else(|e| {
            if let Ok(mut r) = self.refused.lock() {
                *r = Some(e);
            }
            None
        })
    }
}

impl Iterator for Chunks {
    type Item = fpdb::reader::Record;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ready.is_empty() {
            self.ready.extend(self.read_chunk()?);
        }
        let doc = self.ready.pop_front()?;
        self.items += 1;
        Some(fpdb::reader::Record::of_document("python", self.items, doc))
    }
}

/// A store error that stopped an ingest.
struct Failed(fpdb::Error);

impl From<fpdb::Error> for Failed {
    fn from(e: fpdb::Error) -> Self {
        Failed(e)
    }
}

/// The result lines of an ingest, as JSON objects, each told once durable.
struct Lines(Vec<Vec<u8>>);

impl fpdb::pipeline::Acknowledge for Lines {
    type Error = Failed;

    fn decided(&mut self, _: &[fpdb::reader::Record], _: &[Result<IngestResult, String>]) {}

    fn durable(
        &mut self,
        _: &[fpdb::reader::Record],
        results: &[Result<IngestResult, String>],
    ) -> Result<(), Failed> {
        for r in results {
            // A document given by Python is always read (it was checked when converted).
            let r = r.as_ref().map_err(|reason| {
                Failed(fpdb::Error::InvalidOption(format!(
                    "a document could not be read: {reason}"
                )))
            })?;
            let line = serde_json::to_vec(&fpdb::ResultLine::of(r, || None))
                .map_err(|e| Failed(fpdb::Error::Storage(e.to_string())))?;
            self.0.push(line);
        }
        Ok(())
    }
}

/// An open store.
#[pyclass(module = "fpdb._native")]
struct Store {
    db: Mutex<Option<Fpdb>>,
}

impl Store {
    fn with<T>(&self, f: impl FnOnce(&mut Fpdb) -> PyResult<T>) -> PyResult<T> {
        let mut g = self
            .db
            .lock()
            .map_err(|_| FpdbError::new_err("the store is unusable after a panic"))?;
        match g.as_mut() {
            Some(db) => f(db),
            None => Err(FpdbError::new_err("the store is closed")),
        }
    }
}

#[pymethods]
impl Store {
    #[new]
    #[pyo3(signature = (path, create = true, read_only = false, cache_mib = 128, memory_filters = false, **kw))]
    fn new(
        py: Python<'_>,
        path: std::path::PathBuf,
        create: bool,
        read_only: bool,
        cache_mib: usize,
        memory_filters: bool,
        kw: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        // A clock override that cannot be read is an error here too, as on the command line
        // (the library would use the system clock instead).
        fpdb::clock::check_env().map_err(SettingsError::new_err)?;
        let s = settings(kw)?;
        let db = py
            .allow_threads(|| {
                Fpdb::builder()
                    .settings(s)
                    .create(create && !read_only)
                    .read_only(read_only)
                    .cache_bytes(cache_mib.max(8) << 20)
                    .presence_filters(memory_filters)
                    .open(&path)
            })
            .map_err(err)?;
        Ok(Store {
            db: Mutex::new(Some(db)),
        })
    }

    /// Ingest the documents of `chunks` (`Fpdb.ingest` and `ingest_many`), an iterator of
    /// lists of (id, text, title, url, date) tuples (each list converted whole, so a list with a bad document writes none of it),
    /// through the library's one ingest path: read ahead, fingerprinted on all cores while
    /// the chunk before is decided, made durable on a thread of its own while the next is
    /// decided. Every document is durable when this returns. Returns the result lines as JSON
    /// text. A bad document raises after the chunks before its own are stored.
    #[pyo3(signature = (chunks, replace = false, batch_size = 1024))]
    fn ingest_chunks(
        &self,
        py: Python<'_>,
        chunks: &Bound<'_, PyAny>,
        replace: bool,
        batch_size: usize,
    ) -> PyResult<String> {
        let on_existing = if replace {
            OnExisting::Replace
        } else {
            OnExisting::Skip
        };
        let chunks = Chunks {
            iter: chunks.try_iter()?.unbind(),
            ready: std::collections::VecDeque::new(),
            items: 0,
            refused: std::sync::Arc::default(),
        };
        let refused = std::sync::Arc::clone(&chunks.refused);
        let mut lines = Lines(Vec::new());
        py.allow_threads(|| {
            self.with(|db| {
                fpdb::pipeline::Pipeline::new(batch_size)
                    .on_existing(on_existing)
                    .run(db, chunks, &mut lines)
                    .map_err(|Failed(e)| err(e))
            })
        })?;
        let refused = refused.lock().ok().and_then(|mut r| r.take());
        if let Some(e) = refused {
            return Err(e);
        }
        let mut out = Vec::with_capacity(lines.0.len() + 2);
        out.push(b'[');
        out.extend_from_slice(&lines.0.join(&b',')[..]);
        out.push(b']');
        String::from_utf8(out).map_err(|e| FpdbError::new_err(e.to_string()))
    }

    /// What `fpdb query --json` prints for `text` (with its title, for the algorithms that
    /// read one), as JSON text.
    #[pyo3(signature = (text, title=None))]
    fn query(&self, py: Python<'_>, text: String, title: Option<String>) -> PyResult<String> {
        if text.trim().is_empty() {
            return Err(InputError::new_err("the text to query is empty"));
        }
        py.allow_threads(|| {
            self.with(|db| {
                let mut doc = fpdb::Document::new("", text);
                doc.title = title;
                let fps = db.fingerprint_document(&doc);
                let o = db.searcher().query("", &fps).map_err(err)?;
                json(&o.answer(None))
            })
        })
    }

    /// [`Store::query`] of every (text, title), on all cores: a JSON array in input order.
    fn query_many(&self, py: Python<'_>, texts: Vec<(String, Option<String>)>) -> PyResult<String> {
        if let Some(i) = texts.iter().position(|(t, _)| t.trim().is_empty()) {
            return Err(InputError::new_err(format!("text {i} is empty")));
        }
        py.allow_threads(|| {
            self.with(|db| {
                let db = &*db;
                let fps: Vec<fpdb::Fingerprints> = texts
                    .into_par_iter()
                    .map(|(text, title)| {
                        let mut doc = fpdb::Document::new("", text);
                        doc.title = title;
                        db.fingerprint_document(&doc)
                    })
                    .collect();
                let looked: Vec<(&str, &fpdb::Fingerprints)> =
                    fps.iter().map(|f| ("", f)).collect();
                let outcomes: Vec<fpdb::Outcome> = db
                    .searcher()
                    .query_many(&looked)
                    .into_iter()
                    .collect::<fpdb::Result<_>>()
                    .map_err(err)?;
                json(&outcomes.iter().map(|o| o.answer(None)).collect::<Vec<_>>())
            })
        })
    }

    /// `fpdb stats --json`, as JSON text.
    fn stats(&self, py: Python<'_>) -> PyResult<String> {
        py.allow_threads(|| self.with(|db| json(&db.searcher().stats())))
    }

    /// `fpdb report --json` (figures, cluster size classes, days, host pairs, the largest
    /// clusters), as JSON text.
    #[pyo3(signature = (largest = 20, members = 10, hosts = 20))]
    fn report(
        &self,
        py: Python<'_>,
        largest: usize,
        members: usize,
        hosts: usize,
    ) -> PyResult<String> {
        let opts = fpdb::report::ReportOptions {
            largest,
            members,
            hosts,
        };
        py.allow_threads(|| self.with(|db| json(&db.searcher().report(opts).map_err(err)?)))
    }

    /// What this handle's lookups read since it was opened (`LookupStats`), as JSON text.
    fn lookup_stats(&self, py: Python<'_>) -> PyResult<String> {
        py.allow_threads(|| self.with(|db| json(&db.meters().lookups)))
    }

    /// A stored document as JSON text, or None.
    fn document(&self, py: Python<'_>, id: String) -> PyResult<Option<String>> {
        py.allow_threads(|| {
            self.with(
                |db| match db.searcher().stored_document(&id).map_err(err)? {
                    Some(d) => json(&d).map(Some),
                    None => Ok(None),
                },
            )
        })
    }

    /// A cluster as JSON text, or None.
    #[pyo3(signature = (similar_id, limit = 1000))]
    fn cluster(&self, py: Python<'_>, similar_id: u64, limit: usize) -> PyResult<Option<String>> {
        py.allow_threads(|| {
            self.with(|db| {
                match db
                    .searcher()
                    .cluster_members(similar_id, limit)
                    .map_err(err)?
                {
                    Some(c) => json(&c).map(Some),
                    None => Ok(None),
                }
            })
        })
    }

    /// Flush and close (later calls raise). Closing twice is fine.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let db = self
            .db
            .lock()
            .map_err(|_| FpdbError::new_err("the store is unusable after a panic"))?
            .take();
        if let Some(db) = db {
            py.allow_threads(|| db.flush()).map_err(err)?;
        }
        Ok(())
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Store>()?;
    let py = m.py();
    m.add("FpdbError", py.get_type::<FpdbError>())?;
    m.add("LockedError", py.get_type::<LockedError>())?;
    m.add("SettingsError", py.get_type::<SettingsError>())?;
    m.add("NotFoundError", py.get_type::<NotFoundError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    // The store settings `open` takes by name, from the library's table of settings (so the
    // docstring lists every one): `algos` and `weight_check` first, then the table's (but
    // `key_algos`, which `algos` sets).
    let mut names = vec!["algos", "weight_check"];
    names.extend(Settings::names().into_iter().filter(|n| *n != "key_algos"));
    m.add("SETTING_NAMES", names)?;
    Ok(())
}

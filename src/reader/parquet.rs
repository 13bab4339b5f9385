//! Parquet files (Hugging Face datasets, Spark and pandas output): rows streamed a batch at a
//! time (only the columns named by the field options are read, one row group's chunks at a
//! time), with the same field options as JSONL, dotted names reaching into struct columns.
//! String, large-string, string-view and dictionary-encoded string columns are text; ids may
//! also be integers. A file without the id column numbers its rows (`file#row`).

use std::fs::File;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_schema::{DataType, Fields as ArrowFields};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;

use super::{check_id, error, page_document, Fields, Inputs, Reading, Record, Shared, Unit};
use crate::engine::Document;

thread_local! {
    /// Set while [`guarded`] runs on this thread: its panics are reported as errors, not
    /// printed.
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `f()`, with a panic turned into an error: the parquet crate asserts on some damaged
/// metadata (e.g. "column start and length should not be negative") instead of returning an
/// error, and a damaged file must not take the ingest down. Such panics are not printed; every
/// other panic still is.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    GUARDED.with(|g| g.set(true));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(false));
    r.map_err(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(std::string::ToString::to_string)
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown failure".into());
        format!("the Parquet reader failed: {what}")
    })
}

/// Parquet's magic number, at the start and the end of every file.
pub(super) const MAGIC: &[u8] = b"PAR1";

/// Rows per batch read.
const BATCH_ROWS: usize = 256;

/// Where each field's values are: a path of column names from the top level (one name, or
/// several through struct columns), or nothing.
#[derive(Debug, Clone, Default)]
pub(super) struct Paths {
    id: Option<Vec<String>>,
    text: Option<Vec<String>>,
    title: Option<Vec<String>>,
    url: Option<Vec<String>>,
    html: Option<Vec<String>>,
    time: Option<Vec<String>>,
    publisher: Option<Vec<String>>,
}

/// The rows of an open Parquet file, read one row group at a time: a damaged row group costs
/// its own rows, and the next one is read.
pub(super) struct Rows {
    file: File,
    meta: ArrowReaderMetadata,
    mask: ProjectionMask,
    /// The reader of the current row group.
    reader: Option<ParquetRecordBatchReader>,
    /// The next row group to open.
    next_group: usize,
    /// Rows of the row groups opened so far (the current one included).
    group_end: u64,
    paths: Paths,
    batch: Option<RecordBatch>,
    /// Next row of `batch`.
    pos: usize,
    /// Rows read before `batch`.
    done: u64,
    /// The top-level columns read (their names).
    roots: Vec<String>,
    /// Counts the pages read that carry no CRC ([`super::Counts::unchecked_pages`]).
    unchecked: super::source::Unchecked,
}

/// Rows not read: (why, how many).
enum Unread {
    /// A row group the decoder could not read: its rows are lost to damage.
    Damaged(String, u64),
    /// A row group over `--max-doc-bytes` a row, by its metadata: skipped as too large.
    Oversized(String, u64),
}

/// The path of `name` in a schema with top-level `fields`: the column of that name, else the
/// dotted path through struct columns. `None` when there is none.
fn resolve(fields: &ArrowFields, name: &str) -> Option<Vec<String>> {
    if name.is_empty() {
        return None;
    }
    if fields.iter().any(|f| f.name() == name) {
        return Some(vec![name.to_string()]);
    }
    let (first, rest) = name.split_once('.')?;
    let f = fields.iter().find(|f| f.name() == first)?;
    match f.data_type() {
        DataType::Struct(inner) => {
            let mut path = vec![first.to_string()];
            path.extend(resolve(inner, rest)?);
            Some(path)
        }
        _ => None,
    }
}

/// The column at `path` in `batch` (a child of struct columns for longer paths), and the
/// struct arrays on the way (a null struct makes its children null).
fn column<'a>(
    batch: &'a RecordBatch,
    path: &[String],
) -> Option<(&'a ArrayRef, Vec<&'a StructArray>)> {
    let mut col = batch.column_by_name(&path[0])?;
    let mut parents = Vec::new();
    for name in &path[1..] {
        let s = col.as_struct_opt()?;
        parents.push(s);
        col = s.column_by_name(name)?;
    }
    Some((col, parents))
}

/// Whether a column of this type can hold text (and, with `ints`, an integer id).
fn readable(t: &DataType, ints: bool) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => readable(v, false),
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => ints,
        _ => false,
    }
}

/// The type at `path` in `fields`.
fn type_at(fields: &ArrowFields, path: &[String]) -> Option<DataType> {
    let f = fields.iter().find(|f| f.name() == &path[0])?;
    match (path.len(), f.data_type()) {
        (1, t) => Some(t.clone()),
        (_, DataType::Struct(inner)) => type_at(inner, &path[1..]),
        _ => None,
    }
}

/// Value `row` of `a` as a string: `None` when null.
fn string_at(a: &dyn Array, row: usize) -> Option<String> {
    if a.is_null(row) {
        return None;
    }
    macro_rules! int {
        ($($t:ty),*) => {
            $(if let Some(p) = a.as_primitive_opt::<$t>() {
                return Some(p.value(row).to_string());
            })*
        };
    }
    if let Some(s) = a.as_string_opt::<i32>() {
        return Some(s.value(row).to_string());
    }
    if let Some(s) = a.as_string_opt::<i64>() {
        return Some(s.value(row).to_string());
    }
    if let Some(s) = a.as_string_view_opt() {
        return Some(s.value(row).to_string());
    }
    if let Some(d) = a.as_any_dictionary_opt() {
        let key = d.normalized_keys()[row];
        return string_at(d.values().as_ref(), key);
    }
    int!(Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type);
    // Timestamps and dates (a time column): seconds since the epoch.
    macro_rules! seconds {
        ($($t:ty => $per_second:expr),*) => {
            $(if let Some(p) = a.as_primitive_opt::<$t>() {
                return Some((i64::from(p.value(row)) / $per_second).to_string());
            })*
        };
    }
    seconds!(
        arrow_array::types::TimestampSecondType => 1,
        arrow_array::types::TimestampMillisecondType => 1_000,
        arrow_array::types::TimestampMicrosecondType => 1_000_000,
        arrow_array::types::TimestampNanosecondType => 1_000_000_000,
        arrow_array::types::Date64Type => 1_000
    );
    if let Some(p) = a.as_primitive_opt::<arrow_array::types::Date32Type>() {
        return Some((i64::from(p.value(row)) * 86_400).to_string());
    }
    None
}

impl Rows {
    /// Open `file` and find the columns `fields` name. `Err`: why the file cannot be read.
    fn open(
        file: File,
        fields: &Fields,
        unchecked: &super::source::Unchecked,
    ) -> Result<Rows, String> {
        let meta = ArrowReaderMetadata::load(&file, Default::default())
            .map_err(|e| format!("not a readable Parquet file: {e}"))?;
        let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(
            file.try_clone().map_err(|e| format!("cannot open: {e}"))?,
            meta.clone(),
        );
        let schema = builder.schema().clone();
        let top = schema.fields();
        let paths = Paths {
            id: resolve(top, &fields.id),
            text: resolve(top, &fields.text),
            title: resolve(top, &fields.title),
            url: resolve(top, &fields.url),
            html: resolve(top, &fields.html),
            time: resolve(top, &fields.time),
            // A column that is not text is passed over, not refused (see `jsonl.rs`).
            publisher: resolve(top, &fields.publisher)
                .filter(|p| readable(&type_at(top, p).unwrap_or(DataType::Null), false)),
        };
        if paths.text.is_none() && paths.html.is_none() {
            return Err(format!(
                "no `{}` (or `{}`) column",
                fields.text, fields.html
            ));
        }
        for (name, path, ints) in [
            (&fields.id, &paths.id, true),
            (&fields.text, &paths.text, false),
            (&fields.title, &paths.title, false),
            (&fields.url, &paths.url, false),
            (&fields.html, &paths.html, false),
        ] {
            if let Some(p) = path {
                let t = type_at(top, p).unwrap_or(DataType::Null);
                if !readable(&t, ints) {
                    return Err(format!("column `{name}` is {t}, not a string column"));
                }
            }
        }
        // Read only the top-level columns the fields name.
        let roots: Vec<usize> = [
            &paths.id,
            &paths.text,
            &paths.title,
            &paths.url,
            &paths.html,
            &paths.time,
            &paths.publisher,
        ]
        .into_iter()
        .flatten()
        .filter_map(|p| top.iter().position(|f| f.name() == &p[0]))
        .collect();
        let names = roots.iter().map(|&i| top[i].name().clone()).collect();
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        Ok(Rows {
            file,
            meta,
            mask,
            reader: None,
            next_group: 0,
            group_end: 0,
            paths,
            batch: None,
            pos: 0,
            done: 0,
            roots: names,
            unchecked: unchecked.clone(),
        })
    }

    /// The next batch of rows: `None` at the end of the file; `Err((why, rows lost))` for a row
    /// group that cannot be read (the rest of it is passed over, the next one read).
    fn next_batch(&mut self, max: usize) -> Option<Result<RecordBatch, Unread>> {
        loop {
            if self.reader.is_none() {
                let groups = self.meta.metadata().num_row_groups();
                if self.next_group >= groups {
                    return None;
                }
                let g = self.next_group;
                self.next_group += 1;
                let rows = self.meta.metadata().row_group(g).num_rows().max(0) as u64;
                let start = self.group_end;
                self.group_end += rows;
                let pages = self.pages(g);
                if let Some(why) = self.oversized(g, max).or_else(|| wide_page(pages, max)) {
                    self.done = start + rows;
                    return Some(Err(Unread::Oversized(
                        format!("row group {g}: {why}"),
                        rows,
                    )));
                }
                let built = self
                    .file
                    .try_clone()
                    .map_err(|e| e.to_string())
                    .and_then(|f| {
                        ParquetRecordBatchReaderBuilder::new_with_metadata(f, self.meta.clone())
                            .with_projection(self.mask.clone())
                            .with_row_groups(vec![g])
                            .with_batch_size(BATCH_ROWS)
                            .build()
                            .map_err(|e| e.to_string())
                    });
                match built {
                    Ok(r) => self.reader = Some(r),
                    Err(e) => {
                        self.done = start + rows;
                        return Some(Err(Unread::Damaged(format!("row group {g}: {e}"), rows)));
                    }
                }
            }
            let reader = self.reader.as_mut().expect("a row group is open");
            let next = match guarded(|| reader.next()) {
                Ok(n) => n.map(|b| b.map_err(|e| e.to_string())),
                Err(failed) => Some(Err(failed)),
            };
            match next {
                Some(Ok(b)) => return Some(Ok(b)),
                None => self.reader = None,
                Some(Err(e)) => {
                    // The rows of this group not read yet are lost; the next group is read.
                    self.reader = None;
                    let lost = self.group_end.saturating_sub(self.done);
                    self.done = self.group_end;
                    let g = self.next_group - 1;
                    return Some(Err(Unread::Damaged(format!("row group {g}: {e}"), lost)));
                }
            }
        }
    }

    /// The column chunks of row group `g` that are read (those of the fields' top-level
    /// columns).
    fn read_columns(
        &self,
        g: usize,
    ) -> impl Iterator<Item = &parquet::file::metadata::ColumnChunkMetaData> {
        self.meta
            .metadata()
            .row_group(g)
            .columns()
            .iter()
            .filter(|c| {
                c.column_path()
                    .parts()
                    .first()
                    .is_some_and(|r| self.roots.contains(r))
            })
    }

    /// The pages of row group `g`'s columns read, walked by their headers (counting those
    /// without a CRC).
    fn pages(&self, g: usize) -> super::parquet_pages::Pages {
        let mut pages = super::parquet_pages::Pages::default();
        for c in self.read_columns(g) {
            // Not `byte_range()`: it panics on negative offsets in damaged metadata.
            let start = c.dictionary_page_offset().unwrap_or(c.data_page_offset());
            if let (Ok(start), Ok(len)) = (u64::try_from(start), u64::try_from(c.compressed_size()))
            {
                pages.merge(super::parquet_pages::walk(&self.file, start, len));
            }
        }
        self.unchecked
            .fetch_add(pages.unchecked, std::sync::atomic::Ordering::Relaxed);
        pages
    }

    /// Why row group `g` is not decoded, judged from its column metadata alone: the columns
    /// read hold more bytes uncompressed than `max` (`--max-doc-bytes`) per row, so a row of
    /// it is over the bound and decoding it would cost more memory than a document may (a
    /// 34 KB file of a 900 MB row took 2.7 GB). A group of rows within the bound on average
    /// is decoded a page at a time, and its rows over the bound are skipped one by one.
    fn oversized(&self, g: usize, max: usize) -> Option<String> {
        let group = self.meta.metadata().row_group(g);
        let rows = group.num_rows().max(1) as u64;
        let bytes: u64 = self
            .read_columns(g)
            .map(|c| c.uncompressed_size().max(0) as u64)
            .sum();
        (bytes > rows.saturating_mul(max as u64)).then(|| {
            format!(
                "its {rows} row(s) hold {bytes} bytes uncompressed in the columns read, over \
                 {max} bytes (--max-doc-bytes) a row: not decoded, its rows skipped"
            )
        })
    }

    /// Row `pos` of the current batch as a document (`row`: its number in the file, from 1).
    fn document(&self, source: &str, row: u64, fields: &Fields) -> Result<Document, String> {
        let batch = self.batch.as_ref().expect("a batch is read");
        let pos = self.pos;
        let get = |path: &Option<Vec<String>>| -> Option<String> {
            let (col, parents) = column(batch, path.as_ref()?)?;
            if parents.iter().any(|s| s.is_null(pos)) {
                return None;
            }
            string_at(col.as_ref(), pos)
        };
        let id = match &self.paths.id {
            None => format!("{source}#{row}"),
            Some(_) => {
                let id = get(&self.paths.id)
                    .ok_or_else(|| format!("missing id field `{}`", fields.id))?;
                check_id(&id, &fields.id)?;
                id
            }
        };
        let mut doc = match (get(&self.paths.text), get(&self.paths.html)) {
            (Some(t), _) if !t.trim().is_empty() => Document::new(id, t),
            (_, Some(h)) if !h.trim().is_empty() => page_document(id, None, &h, true)?,
            (Some(_), _) => return Err(format!("empty document `{id}`")),
            _ => return Err(format!("missing text field `{}`", fields.text)),
        };
        doc.title = doc.title.or(get(&self.paths.title));
        doc.url = get(&self.paths.url);
        doc.publisher = doc.publisher.or(get(&self.paths.publisher));
        if let Some(t) = get(&self.paths.time) {
            super::set_time(&mut doc, &t, &format!("column `{}`", fields.time));
        }
        Ok(doc)
    }
}

/// Why a row group is not decoded, judged from its pages' headers: a page whose values hold
/// more than `max` (`--max-doc-bytes`) bytes each on average holds a value over the bound,
/// and decoding a page decodes it whole (a group of small rows and one of 900 MB passes the
/// column sizes' average, not this).
fn wide_page(pages: super::parquet_pages::Pages, max: usize) -> Option<String> {
    let (bytes, values) = pages.widest;
    (bytes > values.max(1).saturating_mul(max as u64)).then(|| {
        format!(
            "a page of {values} value(s) holds {bytes} bytes uncompressed, over {max} bytes \
             (--max-doc-bytes) a value: not decoded, its row group's rows skipped"
        )
    })
}

impl Inputs {
    /// Start reading Parquet file `path` (named `source`).
    pub(super) fn start_parquet(
        &mut self,
        source: String,
        path: &std::path::Path,
    ) -> Option<Record> {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) => return Some(error(source, 0, Unit::Record, format!("cannot open: {e}"))),
        };
        let fields = &self.shared.opts.fields;
        let unchecked = &self.shared.counts.unchecked_pages;
        match guarded(|| Rows::open(file, fields, unchecked)).and_then(|r| r) {
            Ok(rows) => {
                self.current = Some(Box::new(Parquet {
                    source,
                    rows: Box::new(rows),
                }));
                None
            }
            Err(reason) => Some(error(source, 0, Unit::Record, reason)),
        }
    }
}

/// A Parquet input being read.
pub(super) struct Parquet {
    source: String,
    rows: Box<Rows>,
}

impl Reading for Parquet {
    fn next_record(&mut self, shared: &mut Shared) -> Option<Record> {
        let max = shared.opts.max_doc_bytes;
        let fields = &shared.opts.fields;
        let Parquet { source, rows } = self;
        loop {
            if let Some(b) = &rows.batch {
                if rows.pos < b.num_rows() {
                    break;
                }
                rows.done += b.num_rows() as u64;
            }
            rows.batch = None;
            rows.pos = 0;
            match rows.next_batch(max)? {
                Ok(b) => rows.batch = Some(b),
                Err(Unread::Damaged(e, lost)) => {
                    let mut r = error(
                        source.clone(),
                        rows.done.saturating_sub(lost) + 1,
                        Unit::Record,
                        format!("corrupt Parquet data: {e}; {lost} row(s) of it not read"),
                    );
                    r.lost = lost;
                    return Some(r);
                }
                Err(Unread::Oversized(e, rows_of_it)) => {
                    let at = rows.done.saturating_sub(rows_of_it) + 1;
                    return Some(error(source.clone(), at, Unit::Record, e));
                }
            }
        }
        let row = rows.done + rows.pos as u64 + 1;
        let doc = guarded(|| rows.document(source, row, fields))
            .and_then(|d| d)
            .and_then(|d| {
                let bytes = d.text.len();
                if bytes > max {
                    Err(format!("document larger than {max} bytes"))
                } else {
                    Ok(d)
                }
            });
        let bytes = doc.as_ref().map_or(0, |d| d.text.len());
        rows.pos += 1;
        Some(Record::new(source.clone(), row, Unit::Record, bytes, doc))
    }
}

//! Flags shared by several subcommands: store settings and input reading.

use std::path::PathBuf;

use clap::Args;

use fpdb::reader::{Fields, Format, ReadOptions};
use fpdb::{Algo, Settings};

#[derive(Args, Debug)]
pub(super) struct JsonFlag {
    /// Machine-readable JSON on stdout.
    #[arg(long)]
    pub(super) json: bool,
}

/// The help heading of the store settings' flags.
const STORE_SETTINGS: &str = "Store settings (fixed at creation)";

/// Fingerprint settings: used when the store is created; on an existing store they must equal
/// the store's (an error names both values otherwise). The settings with a flag of their own
/// are [`SettingFlags`], generated from the table of settings; the rest are set here.
#[derive(Args, Debug, Default)]
pub(super) struct SettingsArgs {
    /// Algorithms to use, comma-separated: nshash, simhash, minhash, and the literature's
    /// exact-key ones imatch, keywords, keywords-con, keywords-pct, keywords-check,
    /// keywords-con-check, des, punct, punct-title, segments, two-stage
    /// [default: nshash,minhash]
    #[arg(
        long,
        value_delimiter = ',',
        help_heading = STORE_SETTINGS
    )]
    pub(super) algos: Option<Vec<Algo>>,
    #[command(flatten)]
    pub(super) flags: SettingFlags,
    /// simhash: IDF table (`word idf` lines, e.g. from `fpdb idf`), copied into the store
    /// [default: jieba's built-in table]
    #[arg(
        long,
        value_name = "FILE",
        help_heading = STORE_SETTINGS
    )]
    pub(super) idf: Option<PathBuf>,
    /// keywords-check, keywords-con-check: a shared key makes a candidate only when the kept
    /// terms' weights agree: Σ(wᵢ−wⱼ)² / (Σwᵢ² + Σwⱼ²) < A [default: 0.1]
    #[arg(
        long,
        value_name = "A",
        help_heading = STORE_SETTINGS
    )]
    pub(super) weight_check: Option<f64>,
}

/// The settings with a flag of their own (the rows `set flag` of the table of settings,
/// `options/table.rs`): each flag's name, help, default and type come from its row, so a new
/// row is a new flag with nothing written here. What the user gave, by setting name, in the
/// setting's JSON form, for [`Settings::set_named`].
#[derive(Debug, Default, Clone)]
pub(super) struct SettingFlags {
    given: Vec<(&'static str, serde_json::Value)>,
}

impl SettingFlags {
    /// The value given for setting `name`, if any.
    pub(super) fn get(&self, name: &str) -> Option<&serde_json::Value> {
        self.given.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

/// The flag of the table's row `name` (the setting's name without `_pct`, `_` as `-`), with
/// its help from the row: `help`, then what switching a rule off keeps (a store older binaries
/// read: those of the format before the row's `since`), then the default a new store gets.
fn setting_arg(
    name: &'static str,
    (older, since): (&str, u32),
    help: &str,
    default: &serde_json::Value,
    parser: clap::builder::ValueParser,
) -> clap::Arg {
    let flag = name.strip_suffix("_pct").unwrap_or(name).replace('_', "-");
    let mut text = help.to_string();
    if default.as_bool() == Some(true) && older == "(false)" && since > fpdb::FormatVersion::PLAIN.0
    {
        text.push_str(&format!(
            " (off: the store stays readable by fpdb binaries of format {})",
            since - 1
        ));
    }
    // A row whose help says how its default is chosen gives no fixed one.
    if !help.contains("(default:") {
        let shown = match default {
            serde_json::Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        text.push_str(&format!(" [default: {shown}]"));
    }
    let mut arg = clap::Arg::new(name)
        .long(flag)
        .help(text)
        .help_heading(STORE_SETTINGS)
        .value_parser(parser);
    if default.is_boolean() {
        arg = arg.num_args(0..=1).default_missing_value("true");
    }
    arg.value_name(if name.ends_with("_pct") {
        "PCT".to_string()
    } else {
        name.to_uppercase()
    })
}

/// Code for a row of the table of settings that has a flag of its own.
macro_rules! if_flag {
    (flag, $($code:tt)*) => {
        $($code)*
    };
    ($by:ident, $($code:tt)*) => {};
}

macro_rules! setting_flags {
    ($( $(#[doc = $doc:literal])* $name:ident : $ty:ty = $default:expr,
        older $older:tt, since $since:literal, set $by:ident $(($own:ty))? $(, help $help:literal)? ; )*) => {
        impl clap::Args for SettingFlags {
            fn augment_args(mut cmd: clap::Command) -> clap::Command {
                let defaults = serde_json::to_value(fpdb::Options::default())
                    .expect("options are JSON");
                $( if_flag!($by,
                    let name = stringify!($name);
                    let parser = if name == "expected_docs" {
                        clap::value_parser!(u64).range(1..).into()
                    } else {
                        clap::value_parser!($ty).into()
                    };
                    cmd = cmd.arg(setting_arg(
                        name,
                        (stringify!($older), $since),
                        concat!($($help)?),
                        &defaults[name],
                        parser,
                    ));
                ); )*
                cmd
            }

            fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
                Self::augment_args(cmd)
            }
        }

        impl clap::FromArgMatches for SettingFlags {
            fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
                let mut given = Vec::new();
                $( if_flag!($by,
                    if let Some(v) = m.get_one::<$ty>(stringify!($name)) {
                        let v = serde_json::to_value(v).map_err(|e| {
                            clap::Error::raw(clap::error::ErrorKind::InvalidValue, e)
                        })?;
                        given.push((stringify!($name), v));
                    }
                ); )*
                Ok(Self { given })
            }

            fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
                *self = Self::from_arg_matches(m)?;
                Ok(())
            }
        }
    };
}

fpdb::for_each_setting!(setting_flags);

impl SettingsArgs {
    pub(super) fn to_settings(&self) -> anyhow::Result<Settings> {
        let simhash_idf = match &self.idf {
            None => None,
            Some(p) => {
                // A table is lines of `word idf`.
                let text = super::output::read_lines_capped(p, 64 * 1024, "IDF table")?.join("\n");
                Some(std::sync::Arc::new(fpdb::text::IdfTable::parse(
                    &text,
                    &p.display().to_string(),
                )?))
            }
        };
        if let Some(a) = &self.algos {
            let bands = self
                .flags
                .get("minhash_bands")
                .and_then(serde_json::Value::as_u64);
            if !a.contains(&Algo::Minhash) && bands.is_some_and(|b| b > 0) {
                anyhow::bail!("--minhash-bands needs minhash in --algos");
            }
        }
        let mut settings = Settings {
            simhash_idf,
            ..Default::default()
        };
        for (name, value) in &self.flags.given {
            let known = settings.set_named(name, value.clone())?;
            debug_assert!(known, "`{name}` is a setting's name");
        }
        if let Some(a) = &self.algos {
            let names: Vec<&str> = a.iter().map(|x| x.name()).collect();
            settings.set_algos(&names)?;
        }
        if let Some(w) = self.weight_check {
            settings.set_weight_check(w)?;
        }
        Ok(settings)
    }
}

#[derive(Args, Debug)]
pub(super) struct InputArgs {
    /// Input format. Compression (gzip, zstd) is recognized by the first bytes, whatever the
    /// name. auto: a Parquet, WARC or ARC file by its first bytes (PAR1, WARC/, filedesc://),
    /// else by extension (.parquet .jsonl .ndjson .json .csv .tsv .warc .wet .arc .html .htm,
    /// after .gz/.zst),
    /// else by the first bytes ({, <html); anything else is one text document whose id is its
    /// path. list: a file of input paths, one per line
    #[arg(long, default_value = "auto", value_parser = format_parser())]
    pub(super) format: Format,
    /// JSONL field holding the document id (empty: `file:line`). In JSONL, a name with dots
    /// that is not a key reaches into nested objects: `meta.id`, `content.body`
    #[arg(long, default_value = "id")]
    pub(super) id_field: String,
    /// JSONL field holding the text
    #[arg(long, default_value = "text", value_parser = field_name)]
    pub(super) text_field: String,
    /// JSONL field holding the title (stored, not fingerprinted)
    #[arg(long, default_value = "title")]
    pub(super) title_field: String,
    /// JSONL/CSV field holding the URL (stored)
    #[arg(long, default_value = "url")]
    pub(super) url_field: String,
    /// JSONL/CSV field holding HTML, used when the text field is absent (title, description
    /// and main text are extracted)
    #[arg(long, default_value = "html")]
    pub(super) html_field: String,
    /// JSONL/CSV/Parquet field holding the publication time (RFC 3339, RFC 2822, 2024-05-26,
    /// 2024年5月26日 10:30, Unix seconds); '' for none. WARC and ARC records use their own date,
    /// pages their article:published_time
    #[arg(long, default_value = "date")]
    pub(super) time_field: String,
    /// JSONL/CSV/Parquet field holding who published the document on its host (an account on
    /// a shared host such as mp.weixin.qq.com: what the store learns of a site is kept per
    /// publisher there); '' for none. A page's own account (WeChat's) comes first
    #[arg(long, default_value = "publisher")]
    pub(super) publisher_field: String,
    /// Skip documents (or JSONL lines) larger than this many bytes
    #[arg(long, default_value_t = 32 << 20)]
    pub(super) max_doc_bytes: usize,
    /// The earliest publication time read as one (an earlier one is a lie or a typo: the
    /// ingest time counts, with a warning)
    #[arg(long, default_value = "1900-01-01", value_parser = published_from)]
    pub(super) published_from: i64,
    /// How far past now a publication time may lie (`1d`, `6h`, `0s`); a later one is not
    /// read (the ingest time counts, with a warning)
    #[arg(long, default_value = "1d", value_parser = humantime::parse_duration)]
    pub(super) published_ahead: std::time::Duration,
}

/// `--published-from`: a time in any form the readers read.
fn published_from(s: &str) -> Result<i64, String> {
    fpdb::reader::time::parse_time(s).ok_or_else(|| {
        format!("`{s}` is not a time fpdb reads (e.g. 1900-01-01, 2024-05-26T10:30:00Z)")
    })
}

/// `--format`: one of the reader's format names ([`Format::NAMES`]), listed in the help.
fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser;
    let names = Format::NAMES.iter().map(|(n, _)| *n);
    clap::builder::PossibleValuesParser::new(names)
        .map(|s| s.parse::<Format>().expect("a name of Format::NAMES"))
}

/// A field that must be named: the text has to come from somewhere.
fn field_name(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("a field name cannot be empty (the documents' text is read from it)".into());
    }
    Ok(s.to_string())
}

impl InputArgs {
    pub(super) fn read_options(&self) -> ReadOptions {
        ReadOptions {
            format: self.format,
            fields: Fields {
                id: self.id_field.clone(),
                text: self.text_field.clone(),
                title: self.title_field.clone(),
                url: self.url_field.clone(),
                html: self.html_field.clone(),
                time: self.time_field.clone(),
                publisher: self.publisher_field.clone(),
            },
            max_doc_bytes: self.max_doc_bytes,
            defer_pages: false,
            keep_raw: false,
            published: fpdb::reader::PublishedWindow {
                earliest: self.published_from,
                ahead: i64::try_from(self.published_ahead.as_secs()).unwrap_or(i64::MAX),
            },
        }
    }
}

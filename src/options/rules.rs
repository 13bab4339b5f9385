//! Rules versions: a release's decision rules named together, and the reading of a store's
//! recorded settings that refuses a rule this build does not know.

use super::{FormatVersion, Options, SETTING_TABLE};

/// A named set of decision rules: the settings of the table's rows up to a format, as one
/// release ships them. A store's settings record the rules it was made with, each by name;
/// its rules version names them together ([`Options::rules_version`]). A rule that changes no
/// stored layout joins the next release's rules version without a format of its own: the
/// binaries of this version and later refuse a store that records a setting they do not know
/// (`stored_options`), so the format number moves only with the layout (keys, values,
/// record versions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RulesVersion {
    /// Its name, that of the release that ships it.
    pub name: &'static str,
    /// The newest format of its rules: every row whose `since` is at most this one.
    pub newest: FormatVersion,
}

/// Every rules version, oldest first; the last is the one new stores get. The formats of the
/// rows before the first release (3 to 20) are all its rules: a store of any of them has some
/// of those rules switched off, as its settings say.
pub const RULES_VERSIONS: &[RulesVersion] = &[RulesVersion {
    name: "0.1",
    newest: FormatVersion::CURRENT,
}];

/// Why a store's recorded settings could not be read ([`stored_options`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredError {
    /// Settings this build's table does not have, by name: a newer build's rules.
    Unknown(Vec<String>),
    /// Not the JSON of settings.
    Bad(String),
}

/// The settings a store recorded (`meta/options`, JSON): a setting newer than the store is
/// absent and reads as the table's `older` value; a setting this build does not know is
/// refused by name, never ignored (a store would otherwise be written without its rules).
pub fn stored_options(raw: &[u8]) -> std::result::Result<Options, StoredError> {
    let value: serde_json::Value =
        serde_json::from_slice(raw).map_err(|e| StoredError::Bad(e.to_string()))?;
    if let Some(map) = value.as_object() {
        let unknown: Vec<String> = map
            .keys()
            .filter(|k| !SETTING_TABLE.iter().any(|r| r.name == k.as_str()))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return Err(StoredError::Unknown(unknown));
        }
    }
    serde_json::from_value(value).map_err(|e| StoredError::Bad(e.to_string()))
}

impl Options {
    /// The rules version these settings belong to: the oldest whose rules hold them
    /// ([`Options::rules_format`]).
    pub fn rules_version(&self) -> &'static str {
        let format = self.rules_format();
        RULES_VERSIONS
            .iter()
            .find(|v| v.newest >= format)
            .map_or("newer", |v| v.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every store of today reads as rules version 0.1, and a store's recorded settings read
    /// back: a newer setting that is absent takes its older value, an unknown one is refused
    /// by name, and what is not JSON is said to be bad.
    #[test]
    fn recorded_settings_read_back_and_an_unknown_rule_is_refused() {
        let opts = Options::default();
        assert_eq!(opts.rules_version(), "0.1");
        let mut json = serde_json::to_value(&opts).unwrap();
        let raw = serde_json::to_vec(&json).unwrap();
        assert_eq!(stored_options(&raw), Ok(opts.clone()));
        json.as_object_mut().unwrap().remove("excerpts");
        let older = stored_options(&serde_json::to_vec(&json).unwrap()).unwrap();
        assert!(
            !older.excerpts,
            "a store without the setting was made before it"
        );
        assert_eq!(older.rules_version(), "0.1");
        json["b_rule"] = true.into();
        json["a_rule"] = 3.into();
        assert_eq!(
            stored_options(&serde_json::to_vec(&json).unwrap()),
            Err(StoredError::Unknown(vec!["a_rule".into(), "b_rule".into()]))
        );
        assert!(matches!(
            stored_options(b"{not json"),
            Err(StoredError::Bad(_))
        ));
    }
}

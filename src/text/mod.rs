//! Text processing: normalization, sentence splitting, word segmentation with TF-IDF weights.

mod normalize;
pub mod sentences;
mod tokenize;
mod variant;

pub use normalize::{is_plain_ideograph, join_cjk_lines, normalize, NORMALIZE_VERSION};
pub use tokenize::{weigh, weighted_terms, IdfTable, TermWeights};
pub use variant::to_simplified;

/// The text every fingerprint is computed from: [`normalize`]d, then converted to simplified
/// Chinese when the store was created with `t2s`.
pub fn prepare(text: &str, opts: &crate::Options) -> String {
    let n = normalize(text);
    if opts.t2s {
        if let std::borrow::Cow::Owned(s) = to_simplified(&n) {
            return s;
        }
    }
    n
}

//! Text processing: normalization, sentence splitting, word segmentation with TF-IDF weights.

pub mod cites;
mod idf;
mod lexicon;
pub mod lines;
mod normalize;
mod pieces;
pub mod sentences;
pub mod sites;
mod tokenize;
mod twfold;
mod variant;

pub use idf::IdfTable;
pub use lexicon::warm_up;
pub use normalize::{
    ideograph, ideograph_at, is_plain_ideograph, join_cjk_lines, normalize, NORMALIZE_VERSION,
};
pub use tokenize::{weigh, weighted_terms, TermWeights};
pub use twfold::fold_tw;
pub use variant::to_simplified;

/// The text every fingerprint is computed from: [`normalize`](fn@normalize)d, then converted to simplified
/// Chinese when the store was created with `t2s` (the fingerprinter then joins soft-wrapped
/// lines and folds Taiwan words: [`crate::fingerprint::Fingerprinter::prepare`]).
pub fn prepare(text: &str, opts: &crate::Options) -> String {
    // Normalization notes whether a character the converter may change was written, so
    // simplified text (most text) is not read again to find out.
    let (n, traditional) = normalize::normalize_noting(text);
    if opts.t2s && traditional {
        if let Some(s) = variant::convert(&n) {
            return s;
        }
    }
    n
}

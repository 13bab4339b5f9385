//! Text processing: normalization, sentence splitting, word segmentation with TF-IDF weights.

mod normalize;
pub mod sentences;
mod tokenize;

pub use normalize::{normalize, NORMALIZE_VERSION};
pub use tokenize::weighted_terms;

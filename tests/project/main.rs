//! The project's own rules: the layers between modules, file sizes, and every setting in each
//! place it must appear.

#[path = "../common/mod.rs"]
mod common;

mod layers;
mod settings_places;

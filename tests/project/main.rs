//! The project's own rules: the layers between modules, file sizes, every setting in each
//! place it must appear, and the build's target.

#[path = "../common/mod.rs"]
mod common;

mod build;
mod layers;
mod settings_places;

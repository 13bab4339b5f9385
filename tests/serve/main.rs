//! `fpdb serve` over HTTP: requests and answers, its bounds on clients and bodies, and its page
//! and the report in a browser.

#[path = "../common/mod.rs"]
mod common;

mod bounds;
mod browser;
mod requests;

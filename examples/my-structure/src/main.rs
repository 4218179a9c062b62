//! kvsim's whole command line for this crate's models: `list`, `check`, `explore`,
//! `replay`, `ladder`, `report`, … (`cargo run --release -- --help`).
#![forbid(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    kvsim_cli::Kvsim::new(my_structure::models)
        // `report` writes here without `--out`: this crate's own `reports/`.
        .reports_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/reports"))
        .main()
}

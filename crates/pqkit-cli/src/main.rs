//! The `pqkit` command line. Thin: parsing, files and progress; all cryptography lives in the library.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "pqkit", version, about = "Fast, post-quantum-ready cryptography")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the CPU features pqkit detected and will use.
    Cpu,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Cpu => {
            println!("{}", pqkit::cpu::features());
            ExitCode::SUCCESS
        }
    }
}

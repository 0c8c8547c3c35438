//! pqkit-bench: placeholder until the comparison system lands (issue 3).
fn main() {
    eprintln!("pqkit-bench: not implemented yet");
    std::process::exit(2);
}

//! Compiles the C tests (`tests/c/*.c`) and `examples/c/demo.c` with the system C compiler (`cc`, or `$CC`) against
//! the static and the shared library that cargo built for this test run, and runs them. Also checks that the
//! committed `pqkit.pc` template gives working compiler and linker flags through `pkg-config`.
//!
//! Needs a C compiler (`apt-get install gcc`) and `pkg-config` (`apt-get install pkg-config`); the test fails
//! with that message when they are missing, it does not skip.

use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The directory holding libpqkit_ffi.{a,so} as built for this test run: `cargo test` leaves them in `deps/`
/// next to the test binary; `cargo build` also copies them up to the profile directory (`target/<profile>`).
/// `deps/` comes first, so a stale copy left by an earlier `cargo build` is never the one tested.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("target/<profile>/deps").to_path_buf();
    let profile = deps.parent().map(Path::to_path_buf);
    let has_both = |d: &Path| ["libpqkit_ffi.a", "libpqkit_ffi.so"].iter().all(|lib| d.join(lib).exists());
    std::iter::once(deps.clone()).chain(profile).find(|d| has_both(d)).unwrap_or_else(|| {
        panic!("libpqkit_ffi.a and .so not found in {} or its parent: build with cargo first", deps.display())
    })
}

/// A fresh directory under the system's temporary directory, removed (with everything in it) when dropped.
struct Scratch(tempfile::TempDir);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

fn scratch(name: &str) -> Scratch {
    Scratch(tempfile::Builder::new().prefix(&format!("pqkit-ffi-ctest-{name}-")).tempdir().unwrap())
}

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!(
            "{what}: cannot run {:?} ({e}); install a C compiler and pkg-config: apt-get install gcc pkg-config",
            cmd
        )
    });
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Every C test source: `test_pqkit.c` holds `main` and the counters, the others one family each.
fn c_test_sources() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(crate_dir().join("tests/c"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    v.sort();
    v
}

fn compile(sources: &[PathBuf], exe: &Path, link: &[String]) {
    let include = crate_dir().join("include");
    let mut cmd = Command::new(cc());
    cmd.args(["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1"]).arg("-I").arg(&include);
    cmd.args(sources).arg("-o").arg(exe).args(link);
    run(&mut cmd, "compiling the C test");
}

fn static_link(dir: &Path) -> Vec<String> {
    vec![dir.join("libpqkit_ffi.a").display().to_string(), "-lpthread".into(), "-ldl".into(), "-lm".into()]
}

/// The soname the shared library carries (set by build.rs): `libpqkit_ffi.so.<major>`.
fn soname() -> String {
    format!("libpqkit_ffi.so.{}", env!("CARGO_PKG_VERSION_MAJOR"))
}

/// A directory laid out as an installed library: `libpqkit_ffi.so.<major>` (the file the loader looks for by
/// soname) and the `libpqkit_ffi.so` link the linker finds with `-lpqkit_ffi`, both pointing at the build.
fn installed_layout(name: &str) -> (Scratch, PathBuf) {
    let lib = lib_dir().join("libpqkit_ffi.so");
    let root = scratch(name);
    let dir = root.join("lib");
    std::fs::create_dir_all(&dir).unwrap();
    for link in ["libpqkit_ffi.so".to_string(), soname()] {
        let p = dir.join(link);
        let _ = std::fs::remove_file(&p);
        std::os::unix::fs::symlink(&lib, &p).unwrap();
    }
    (root, dir)
}

fn shared_link(dir: &Path) -> Vec<String> {
    vec![format!("-L{}", dir.display()), format!("-Wl,-rpath,{}", dir.display()), "-lpqkit_ffi".into()]
}

#[test]
fn c_tests_against_static_library() {
    let dir = lib_dir();
    let work = scratch("static");
    let exe = work.join("test_pqkit");
    compile(&c_test_sources(), &exe, &static_link(&dir));
    let out = run(&mut Command::new(&exe), "C tests (static)");
    assert!(out.contains(", 0 failures"), "{out}");
}

#[test]
fn c_tests_against_shared_library() {
    let (_lib, dir) = installed_layout("shared-lib");
    let work = scratch("shared");
    let exe = work.join("test_pqkit");
    compile(&c_test_sources(), &exe, &shared_link(&dir));
    // The binary must really load the shared library (not a static copy).
    let ldd = run(Command::new("ldd").arg(&exe), "ldd");
    assert!(ldd.contains(&format!("{} => ", soname())), "{ldd}");
    let out = run(&mut Command::new(&exe), "C tests (shared)");
    assert!(out.contains(", 0 failures"), "{out}");
}

#[test]
fn example_builds_with_pkg_config_and_runs() {
    let (_lib, dir) = installed_layout("pc-lib");
    let work = scratch("pc");
    let template = std::fs::read_to_string(crate_dir().join("pqkit.pc.in")).unwrap();
    assert!(template.contains("@VERSION@"));
    let pc = template
        .replace("@PREFIX@", "/nonexistent")
        .replace("@LIBDIR@", &dir.display().to_string())
        .replace("@INCLUDEDIR@", &crate_dir().join("include").display().to_string())
        .replace("@VERSION@", env!("CARGO_PKG_VERSION"));
    std::fs::write(work.join("pqkit.pc"), pc).unwrap();
    let pkg =
        |arg: &str| run(Command::new("pkg-config").env("PKG_CONFIG_PATH", &*work).args([arg, "pqkit"]), "pkg-config");
    assert_eq!(pkg("--modversion").trim(), env!("CARGO_PKG_VERSION"));
    let mut flags: Vec<String> = pkg("--cflags").split_whitespace().map(String::from).collect();
    flags.extend(pkg("--libs").split_whitespace().map(String::from));
    flags.push(format!("-Wl,-rpath,{}", dir.display()));
    let example = crate_dir().join("../../examples/c/demo.c");
    let exe = work.join("demo");
    compile(&[example], &exe, &flags);
    let out = run(&mut Command::new(&exe), "examples/c/demo");
    assert!(out.contains("decrypted: attack at dawn"), "{out}");
    assert!(out.contains("tampered message rejected"), "{out}");
}

#[test]
fn readme_c_example_compiles_and_runs() {
    let readme = std::fs::read_to_string(crate_dir().join("../../README.md")).unwrap();
    let start = readme.find("```c\n").expect("README has a C example") + 5;
    let block = &readme[start..start + readme[start..].find("```").unwrap()];
    let (includes, body): (Vec<&str>, Vec<&str>) = block.lines().partition(|l| l.starts_with("#include"));
    let src = format!(
        "{}\n#include <stdlib.h>\nint main(void) {{\n{}\n  return 0;\n}}\n",
        includes.join("\n"),
        body.join("\n")
    );
    let work = scratch("readme");
    std::fs::write(work.join("readme.c"), src).unwrap();
    let exe = work.join("readme");
    compile(&[work.join("readme.c")], &exe, &static_link(&lib_dir()));
    run(&mut Command::new(&exe), "README C example");
}

/// The shared library names its ABI version: programs linked against it need `libpqkit_ffi.so.<major>`.
#[test]
fn shared_library_has_a_soname() {
    let lib = lib_dir().join("libpqkit_ffi.so");
    let dynamic = run(Command::new("readelf").arg("-d").arg(&lib), "readelf -d (apt-get install binutils)");
    assert!(dynamic.contains(&format!("Library soname: [{}]", soname())), "{dynamic}");
}

/// Every C program in docs/c.md (each ```c block with a `main`) compiles as C99 with -Werror against the
/// static library and runs to a zero exit status, in an empty directory of its own.
#[test]
fn docs_c_examples_compile_and_run() {
    let doc = std::fs::read_to_string(crate_dir().join("../../docs/c.md")).unwrap();
    let mut count = 0;
    for (i, block) in doc.split("```c\n").skip(1).enumerate() {
        let src = &block[..block.find("```").expect("closed code block")];
        if !src.contains("int main(") {
            continue;
        }
        let work = scratch(&format!("doc-{i}"));
        std::fs::write(work.join("example.c"), src).unwrap();
        let exe = work.join("example");
        compile(&[work.join("example.c")], &exe, &static_link(&lib_dir()));
        run(Command::new(&exe).current_dir(&*work), &format!("docs/c.md example {i}"));
        count += 1;
    }
    assert!(count >= 2, "docs/c.md has {count} complete C programs");
}

/// The header is C99 with /* */ comments only, may be included twice, and declares the functions with C
/// linkage for C++ (compiled with `c++`, whose absence fails under CI and is reported elsewhere).
#[test]
fn header_is_clean_c99_and_cxx() {
    let header = std::fs::read_to_string(crate_dir().join("include/pqkit.h")).unwrap();
    // No `//` outside /* */ comments (inside them, a URL may hold one).
    let mut in_comment = false;
    for (i, line) in header.lines().enumerate() {
        let mut rest = line;
        loop {
            if in_comment {
                match rest.find("*/") {
                    Some(p) => (in_comment, rest) = (false, &rest[p + 2..]),
                    None => break,
                }
            } else {
                let (c, s) = (rest.find("/*"), rest.find("//"));
                assert!(s.is_none() || c.is_some_and(|c| c < s.unwrap()), "pqkit.h:{}: a // comment", i + 1);
                match c {
                    Some(p) => (in_comment, rest) = (true, &rest[p + 2..]),
                    None => break,
                }
            }
        }
    }
    let work = scratch("header");
    let src = work.join("twice.c");
    std::fs::write(
        &src,
        "#include \"pqkit.h\"\n#include \"pqkit.h\"\nint main(void) { return pqkit_version() == 0; }\n",
    )
    .unwrap();
    let exe = work.join("twice");
    compile(std::slice::from_ref(&src), &exe, &static_link(&lib_dir()));
    run(&mut Command::new(&exe), "header included twice (C)");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    if Command::new(&cxx).arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "CI: no C++ compiler ({cxx}): apt-get install g++");
        eprintln!("WARNING: no C++ compiler ({cxx}; apt-get install g++): the C++ check of pqkit.h is SKIPPED");
        return;
    }
    let mut cmd = Command::new(&cxx);
    cmd.args(["-x", "c++", "-std=c++11", "-pedantic", "-Wall", "-Wextra", "-Werror"]);
    cmd.arg("-I")
        .arg(crate_dir().join("include"))
        .arg(&src)
        .arg("-x")
        .arg("none")
        .arg("-o")
        .arg(work.join("twice_cxx"));
    cmd.args(static_link(&lib_dir()));
    run(&mut cmd, "compiling pqkit.h as C++");
    run(&mut Command::new(work.join("twice_cxx")), "header included twice (C++)");
}

//! The README's library example is `examples/quickstart.rs`, which cargo
//! compiles with the tests: this keeps the two the same text.

#[test]
fn readme_library_example_is_the_compiled_quickstart() {
    let readme = include_str!("../../README.md");
    let example = include_str!("../examples/quickstart.rs");
    let start = readme.find("```rust\n").expect("README has a Rust example") + "```rust\n".len();
    let end = start + readme[start..].find("```").expect("the example's fence closes");
    let code: String =
        example.lines().skip_while(|l| l.starts_with("//!") || l.is_empty()).map(|l| format!("{l}\n")).collect();
    assert_eq!(&readme[start..end], code, "README.md's example and host/examples/quickstart.rs differ");
}

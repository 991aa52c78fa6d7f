//! `report::parse` against real `ptxas -v` output (the fixtures were made by
//! ptxas 13.0.88 from this repository's PTX and from `fixtures/devfn.ptx`;
//! `ptxas_sm90a_c7513.txt` from commit 14256c1's, whose `wgmma` D=64 loop
//! ptxas serialized) and against malformed reports.

use kernel_builder::report::{Advisory, EntryReport, FunctionReport, parse, parse_report};

const SM90A: &str = include_str!("fixtures/ptxas_sm90a.txt");
const SM89: &str = include_str!("fixtures/ptxas_sm89.txt");
const DEVFN: &str = include_str!("fixtures/ptxas_devfn_sm90a.txt");
const C7513: &str = include_str!("fixtures/ptxas_sm90a_c7513.txt");

fn entry<'a>(entries: &'a [EntryReport], name: &str) -> &'a EntryReport {
    entries.iter().find(|e| e.entry == name).unwrap_or_else(|| panic!("{name} not parsed"))
}

#[test]
fn sm90a_fixture_has_every_kernel_in_order() {
    let entries = parse(SM90A).unwrap();
    let names: Vec<&str> = entries.iter().map(|e| e.entry.as_str()).collect();
    assert_eq!(names, ["sdpa_naive_d64", "sdpa_naive_d128", "sdpa_mma_d64", "sdpa_mma_d128"]);
    assert!(entries.iter().all(|e| e.arch == "sm_90a"));
}

#[test]
fn sm90a_fixture_figures() {
    let entries = parse(SM90A).unwrap();
    let mma64 = EntryReport {
        entry: "sdpa_mma_d64".into(),
        arch: "sm_90a".into(),
        registers: 147,
        shared_bytes: 0,
        stack_bytes: 0,
        spill_store_bytes: 0,
        spill_load_bytes: 0,
        barriers: 1,
    };
    assert_eq!(entry(&entries, "sdpa_mma_d64"), &mma64);
    assert_eq!(entry(&entries, "sdpa_mma_d128").registers, 255);
    assert_eq!(entry(&entries, "sdpa_mma_d128").barriers, 1);
    let naive = entry(&entries, "sdpa_naive_d64");
    assert_eq!((naive.registers, naive.barriers, naive.shared_bytes), (30, 0, 0));
    assert_eq!(entry(&entries, "sdpa_naive_d128").registers, 37);
}

#[test]
fn sm89_fixture_figures() {
    let entries = parse(SM89).unwrap();
    assert_eq!(entries.len(), 4);
    assert!(entries.iter().all(|e| e.arch == "sm_89"));
    let mma128 = entry(&entries, "sdpa_mma_d128");
    assert_eq!((mma128.registers, mma128.barriers, mma128.shared_bytes), (167, 1, 0));
    assert_eq!((mma128.stack_bytes, mma128.spill_store_bytes, mma128.spill_load_bytes), (0, 0, 0));
    assert_eq!(entry(&entries, "sdpa_mma_d64").registers, 136);
    assert_eq!(entry(&entries, "sdpa_naive_d64").registers, 30);
    assert_eq!(entry(&entries, "sdpa_naive_d128").registers, 37);
}

#[test]
fn device_function_block_is_not_an_entry() {
    let report = parse_report(DEVFN).unwrap();
    let names: Vec<&str> = report.entries.iter().map(|e| e.entry.as_str()).collect();
    assert_eq!(names, ["stack_entry", "plain_entry", "probe_entry"]);
    // `count_down` is a recursive .func: its block follows probe_entry's
    // `Used` line and must not overwrite probe_entry's figures.
    let probe = entry(&report.entries, "probe_entry");
    assert_eq!((probe.registers, probe.barriers, probe.shared_bytes), (24, 1, 4096));
    assert_eq!((probe.stack_bytes, probe.spill_store_bytes, probe.spill_load_bytes), (0, 0, 0));
    let count_down =
        FunctionReport { name: "count_down".into(), stack_bytes: 16, spill_store_bytes: 16, spill_load_bytes: 16 };
    assert_eq!(report.functions, [count_down]);
}

#[test]
fn entry_stack_frame_and_extra_used_items() {
    // stack_entry's `Used` line ends in "64 bytes cumulative stack size".
    let entries = parse(DEVFN).unwrap();
    let stack = entry(&entries, "stack_entry");
    assert_eq!((stack.registers, stack.stack_bytes, stack.shared_bytes), (10, 64, 0));
    assert_eq!(entry(&entries, "plain_entry").registers, 8);
}

#[test]
fn smem_and_cmem_items() {
    let text = "\
ptxas info    : Compiling entry function 'sdpa_mma_d64' for 'sm_90a'
ptxas info    : Function properties for sdpa_mma_d64
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 147 registers, used 1 barriers, 34816 bytes smem, 400 bytes cmem[0]
";
    let e = &parse(text).unwrap()[0];
    assert_eq!((e.registers, e.barriers, e.shared_bytes), (147, 1, 34816));
    assert_eq!((e.stack_bytes, e.spill_store_bytes, e.spill_load_bytes), (8, 4, 12));
}

#[test]
fn device_function_before_entry_properties() {
    // A callee's block printed between the entry's header and its own block.
    let text = "\
ptxas info    : Compiling entry function 'k' for 'sm_89'
ptxas info    : Function properties for _RNvCs123_helper
    32 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Function properties for k
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers
";
    let report = parse_report(text).unwrap();
    assert_eq!(report.entries.len(), 1);
    assert_eq!((report.entries[0].registers, report.entries[0].stack_bytes), (40, 0));
    assert_eq!(report.functions[0].name, "_RNvCs123_helper");
    assert_eq!(report.functions[0].stack_bytes, 32);
}

#[test]
fn performance_advisories_are_collected_with_the_function_they_name() {
    let report = parse_report(C7513).unwrap();
    assert_eq!(report.entries.len(), 10, "the entries still parse around the advisory");
    let text = "Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions \
                defining input registers of a wgmma between start and end of the pipeline stage in the function \
                'sdpa_wgmma_d64'";
    let want = Advisory { code: "C7513".into(), function: Some("sdpa_wgmma_d64".into()), text: text.into() };
    assert_eq!(report.advisories, vec![want]);
    for clean in [SM90A, SM89, DEVFN] {
        assert_eq!(parse_report(clean).unwrap().advisories, vec![]);
    }
}

#[test]
fn other_coded_messages_are_not_advisories() {
    let text = "\
ptxas info    : (C7000) Something else entirely
ptxas info    : (Cx) Potential Performance Loss: not a numbered code
ptxas info    : Compiling entry function 'k' for 'sm_90a'
ptxas info    : Function properties for k
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers
";
    assert_eq!(parse_report(text).unwrap().advisories, vec![]);
}

fn parse_err(text: &str) -> String {
    parse(text).expect_err("malformed report parsed")
}

const HEAD: &str = "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n";
const PROPS: &str = "ptxas info    : Function properties for k\n";
const FRAME: &str = "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
const USED: &str = "ptxas info    : Used 40 registers, used 0 barriers\n";

#[test]
fn well_formed_pieces_parse() {
    assert_eq!(parse(&[HEAD, PROPS, FRAME, USED].concat()).unwrap()[0].registers, 40);
}

#[test]
fn rejects_text_without_entries() {
    assert!(parse_err("").contains("no 'Compiling entry function'"));
    assert!(parse_err("ptxas info    : 0 bytes gmem\nhello\n").contains("no 'Compiling entry function'"));
}

#[test]
fn rejects_malformed_entry_header() {
    let err = parse_err(&["ptxas info    : Compiling entry function k for sm_90a\n", PROPS, FRAME, USED].concat());
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn rejects_bad_numbers() {
    let err = parse_err(&[HEAD, PROPS, FRAME, "ptxas info    : Used x40 registers\n"].concat());
    assert!(err.contains("line 4") && err.contains("x40"), "{err}");
    let err = parse_err(&[HEAD, PROPS, FRAME, "ptxas info    : Used 99999999999 registers\n"].concat());
    assert!(err.contains("99999999999"), "{err}");
    let frame = "    0 bytes stack frame, -4 bytes spill stores, 0 bytes spill loads\n";
    let err = parse_err(&[HEAD, PROPS, frame, USED].concat());
    assert!(err.contains("-4"), "{err}");
}

#[test]
fn rejects_properties_without_frame_line() {
    let err = parse_err(&[HEAD, PROPS, USED].concat());
    assert!(err.contains("line 3") && err.contains("stack frame"), "{err}");
    let err = parse_err(&[HEAD, PROPS].concat());
    assert!(err.contains("cut off"), "{err}");
}

#[test]
fn rejects_incomplete_entries() {
    let err = parse_err(&[HEAD, PROPS, FRAME].concat());
    assert!(err.contains("'k'") && err.contains("Used"), "{err}");
    let err = parse_err(&[HEAD, USED].concat());
    assert!(err.contains("'k'") && err.contains("Function properties"), "{err}");
    let err = parse_err(&[HEAD, PROPS, FRAME, "ptxas info    : Used 0 barriers\n"].concat());
    assert!(err.contains("registers"), "{err}");
}

#[test]
fn rejects_duplicate_entries() {
    let one = [HEAD, PROPS, FRAME, USED].concat();
    let err = parse_err(&[one.as_str(), one.as_str()].concat());
    assert!(err.contains("twice"), "{err}");
}

//! The PMIx values a `pmix.h`-compatible interface must reproduce: status
//! codes and their names, ranks, ranges, allocation directives, info flags,
//! data types, and the attribute table's keys and types, checked against
//! ../shared/reference/pmix-abi-facts.md and, when the spec sources are next to the
//! repository (`../shared/spec`), against every `\declareAttribute` line of
//! the Standard's chapters. Each test is named after the rule it checks.

use fastpmix::types::attrs::{self, AttrType, ALL};
use fastpmix::types::{
    AllocDirective, DataArray, DataType, InfoFlags, Timeval, MAX_KEYLEN, MAX_NSLEN,
};
use fastpmix::{DataRange, Info, Proc, Rank, Status, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

// ---------------------------------------------------------------------------
// Status codes
// ---------------------------------------------------------------------------

#[test]
fn status_values_match_the_abi() {
    let expected = [
        (Status::SUCCESS, 0),
        (Status::ERROR, -1),
        (Status::ERR_BAD_PARAM, -27),
        (Status::ERR_INIT, -31),
        (Status::ERR_NOT_SUPPORTED, -47),
        (Status::ERR_CONFLICTING_CLEANUP_DIRECTIVES, -51),
        (Status::ERR_LOST_CONNECTION, -61),
        (Status::JCTRL_CHECKPOINT, -106),
        (Status::JCTRL_CHECKPOINT_COMPLETE, -107),
        (Status::JCTRL_PREEMPT_ALERT, -108),
        (Status::MONITOR_HEARTBEAT_ALERT, -109),
        (Status::MONITOR_FILE_ALERT, -110),
        (Status::MONITOR_RESUSAGE_UPDATE, -114), // OpenPMIx master, documented
        (Status::ERR_EVENT_REGISTRATION, -144),
        (Status::EVENT_JOB_END, -145),
        (Status::ERR_JOB_TERMINATED, -145),
        (Status::OPERATION_SUCCEEDED, -157),
        (Status::EVENT_SYS_BASE, -230),
        (Status::EVENT_NODE_DOWN, -231),
        (Status::EVENT_NODE_OFFLINE, -232),
        (Status::EVENT_SYS_OTHER, -330),
        (Status::EVENT_NO_ACTION_TAKEN, -331),
        (Status::EVENT_PARTIAL_ACTION_TAKEN, -332),
        (Status::EVENT_ACTION_DEFERRED, -333),
        (Status::EVENT_ACTION_COMPLETE, -334),
        (Status::EXTERNAL_ERR_BASE, -3000),
        (Status::MAX_ERR_CONSTANT, i32::MIN),
    ];
    for (s, v) in expected {
        assert_eq!(s.0, v, "{s}");
        assert_eq!(i32::from(s), v);
    }
}

#[test]
fn status_display_gives_the_standard_name() {
    assert_eq!(Status::ERR_BAD_PARAM.to_string(), "PMIX_ERR_BAD_PARAM");
    assert_eq!(Status::SUCCESS.to_string(), "PMIX_SUCCESS");
    assert_eq!(
        Status::EVENT_ACTION_COMPLETE.to_string(),
        "PMIX_EVENT_ACTION_COMPLETE"
    );
    assert_eq!(
        Status::ERR_EVENT_REGISTRATION.to_string(),
        "PMIX_ERR_EVENT_REGISTRATION"
    );
    assert_eq!(
        Status::MAX_ERR_CONSTANT.to_string(),
        "PMIX_MAX_ERR_CONSTANT"
    );
    // An aliased value displays its canonical (first) name.
    assert_eq!(Status::ERR_JOB_TERMINATED.to_string(), "PMIX_EVENT_JOB_END");
    assert_eq!(
        format!("{:?}", Status::ERR_BAD_PARAM),
        "PMIX_ERR_BAD_PARAM(-27)"
    );
    // Every named constant: a PMIX_ name, names unique, Display = canonical.
    let mut names = HashSet::new();
    let mut canonical: HashMap<i32, &str> = HashMap::new();
    for (s, n) in Status::all_named() {
        assert!(n.starts_with("PMIX_"), "{n}");
        assert!(names.insert(n), "name {n} listed twice");
        canonical.entry(s.0).or_insert(n);
    }
    assert!(names.len() > 100);
    for (v, n) in canonical {
        assert_eq!(Status(v).to_string(), n);
        assert_eq!(Status(v).name(), Some(n));
    }
}

#[test]
fn unknown_status_codes_display_without_panicking() {
    for v in [12345, -2000, -3001, -999_999, i32::MAX, i32::MIN + 1, 1] {
        let s = Status(v);
        assert_eq!(s.name(), None, "{v}");
        let shown = s.to_string();
        assert!(shown.contains(&v.to_string()), "{shown}");
        assert!(format!("{s:?}").contains(&v.to_string()));
    }
}

#[test]
fn is_system_event_covers_sys_base_down_to_sys_other() {
    for v in [-230, -231, -280, -329, -330] {
        assert!(Status(v).is_system_event(), "{v}");
    }
    for v in [-229, -331, -334, 0, 230, 330, i32::MIN, i32::MAX, -3000] {
        assert!(!Status(v).is_system_event(), "{v}");
    }
    assert!(Status::EVENT_NODE_DOWN.is_system_event());
    assert!(!Status::EVENT_ACTION_COMPLETE.is_system_event());
}

// ---------------------------------------------------------------------------
// Other constants
// ---------------------------------------------------------------------------

#[test]
fn rank_constants_match_the_abi() {
    assert_eq!(Rank::UNDEF.0, u32::MAX);
    assert_eq!(Rank::UNDEF.0, 4_294_967_295);
    assert_eq!(Rank::WILDCARD.0, u32::MAX - 1);
    assert_eq!(Rank::LOCAL_NODE.0, u32::MAX - 2);
    assert_eq!(Rank::INVALID.0, u32::MAX - 3);
    assert_eq!(Rank::LOCAL_PEERS.0, u32::MAX - 4);
    assert_eq!(Rank::VALID.0, u32::MAX - 50);
    assert!(Rank(0).is_real() && Rank::VALID.is_real());
    assert!(!Rank(Rank::VALID.0 + 1).is_real() && !Rank::WILDCARD.is_real());
    // The SMS as an event source: empty namespace, rank UNDEF.
    assert!(Proc::SMS.nspace.is_empty());
    assert_eq!(Proc::SMS.rank, Rank::UNDEF);
}

#[test]
fn data_range_values_match_the_abi() {
    let expected = [
        (DataRange::UNDEF, 0),
        (DataRange::RM, 1),
        (DataRange::LOCAL, 2),
        (DataRange::NAMESPACE, 3),
        (DataRange::SESSION, 4),
        (DataRange::GLOBAL, 5),
        (DataRange::CUSTOM, 6),
        (DataRange::PROC_LOCAL, 7),
        (DataRange::INVALID, 255),
    ];
    for (r, v) in expected {
        assert_eq!(r.0, v);
    }
    for v in 0..=7 {
        assert!(DataRange(v).is_valid());
        assert_eq!(DataRange(v).validate(), Ok(DataRange(v)));
    }
    for v in [8, 100, 254, 255] {
        assert!(!DataRange(v).is_valid());
        assert_eq!(DataRange(v).validate(), Err(Status::ERR_BAD_PARAM));
    }
}

#[test]
fn alloc_directive_values_match_the_abi() {
    assert_eq!(AllocDirective::NEW.0, 1);
    assert_eq!(AllocDirective::EXTEND.0, 2);
    assert_eq!(AllocDirective::RELEASE.0, 3);
    assert_eq!(AllocDirective::REAQUIRE.0, 4);
    assert_eq!(AllocDirective::EXTERNAL.0, 128);
    for v in [1, 2, 3, 4, 128, 200, 255] {
        assert!(AllocDirective(v).is_valid(), "{v}");
    }
    for v in [0, 5, 64, 127] {
        assert!(!AllocDirective(v).is_valid(), "{v}");
    }
}

#[test]
fn info_flag_values_match_the_abi() {
    assert_eq!(InfoFlags::NONE.0, 0);
    assert_eq!(InfoFlags::REQD.0, 0x1);
    assert_eq!(InfoFlags::ARRAY_END.0, 0x2);
    assert_eq!(InfoFlags::REQD_PROCESSED.0, 0x4);
    assert_eq!(InfoFlags::QUALIFIER.0, 0x8);
    assert_eq!(InfoFlags::PERSISTENT.0, 0x10);
    let both = InfoFlags(InfoFlags::REQD.0 | InfoFlags::QUALIFIER.0);
    assert!(both.contains(InfoFlags::REQD) && both.contains(InfoFlags::QUALIFIER));
    assert!(!both.contains(InfoFlags::PERSISTENT));
    assert!(Info::required(attrs::PMIX_EVENT_HDLR_NAME, "x").is_required());
    assert!(!Info::new(attrs::PMIX_EVENT_HDLR_NAME, "x").is_required());
}

#[test]
fn data_type_values_match_the_abi() {
    let expected = [
        (DataType::UNDEF, 0),
        (DataType::BOOL, 1),
        (DataType::BYTE, 2),
        (DataType::STRING, 3),
        (DataType::SIZE, 4),
        (DataType::PID, 5),
        (DataType::INT, 6),
        (DataType::INT8, 7),
        (DataType::INT16, 8),
        (DataType::INT32, 9),
        (DataType::INT64, 10),
        (DataType::UINT, 11),
        (DataType::UINT8, 12),
        (DataType::UINT16, 13),
        (DataType::UINT32, 14),
        (DataType::UINT64, 15),
        (DataType::FLOAT, 16),
        (DataType::DOUBLE, 17),
        (DataType::TIMEVAL, 18),
        (DataType::TIME, 19),
        (DataType::STATUS, 20),
        (DataType::VALUE, 21),
        (DataType::PROC, 22),
        (DataType::INFO, 24),
        (DataType::BYTE_OBJECT, 27),
        (DataType::POINTER, 31),
        (DataType::DATA_RANGE, 33),
        (DataType::DATA_ARRAY, 39),
        (DataType::PROC_RANK, 40),
        (DataType::ALLOC_DIRECTIVE, 43),
        (DataType::DATA_BUFFER, 65),
        (DataType::MAX, 500),
    ];
    for (t, v) in expected {
        assert_eq!(t.0, v);
    }
    assert_eq!(Value::Bool(true).data_type(), DataType::BOOL);
    assert_eq!(
        Value::from(Proc::new("a", 1).unwrap()).data_type(),
        DataType::PROC
    );
    assert_eq!(
        Value::DataArray(DataArray::Proc(vec![])).data_type(),
        DataType::DATA_ARRAY
    );
}

#[test]
fn identifier_limits_match_the_abi() {
    assert_eq!(MAX_NSLEN, 255);
    assert_eq!(MAX_KEYLEN, 511);
}

// ---------------------------------------------------------------------------
// The attribute table
// ---------------------------------------------------------------------------

/// The one documented key alias: RFC0015's `PMIX_MONITOR_FILE` is the
/// Standard's `PMIX_MONITOR_TARGET_FILES`.
const ALIAS_KEY: &str = "pmix.monitor.fmon";

#[test]
fn every_attribute_key_fits_pmix_max_keylen_without_nul() {
    assert!(ALL.len() > 150, "the table shrank to {}", ALL.len());
    for a in ALL {
        assert!(!a.key.is_empty(), "{}", a.name);
        assert!(a.key.len() <= MAX_KEYLEN, "{}", a.name);
        assert!(!a.key.contains('\0'), "{}", a.name);
        assert!(a.name.starts_with("PMIX_"), "{}", a.name);
    }
}

#[test]
fn attribute_keys_are_unique_except_the_documented_monitor_file_alias() {
    let mut by_key: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut names = HashSet::new();
    for a in ALL {
        by_key.entry(a.key).or_default().push(a.name);
        assert!(names.insert(a.name), "{} declared twice", a.name);
    }
    let dups: Vec<_> = by_key.iter().filter(|(_, n)| n.len() > 1).collect();
    assert_eq!(dups.len(), 1, "duplicate keys: {dups:?}");
    let (key, mut who) = (dups[0].0, dups[0].1.clone());
    who.sort_unstable();
    assert_eq!(*key, ALIAS_KEY);
    assert_eq!(who, ["PMIX_MONITOR_FILE", "PMIX_MONITOR_TARGET_FILES"]);
    // Both spellings have the same type, so the lookup by key is unambiguous.
    assert_eq!(attrs::PMIX_MONITOR_FILE, attrs::PMIX_MONITOR_TARGET_FILES);
    let ty = |n: &str| ALL.iter().find(|a| a.name == n).unwrap().ty;
    assert_eq!(ty("PMIX_MONITOR_FILE"), ty("PMIX_MONITOR_TARGET_FILES"));
}

#[test]
fn attribute_table_lookup_and_check_agree_with_the_table() {
    for a in ALL {
        assert_eq!(attrs::expected_type(a.key), Some(a.ty), "{}", a.name);
    }
    assert_eq!(attrs::expected_type("vendor.unknown"), None);
    // Unknown keys pass the type check whatever their value.
    let unknown = Info::new(fastpmix::Key::new("vendor.unknown").unwrap(), 1u32);
    assert_eq!(attrs::check(&unknown), Ok(()));
}

#[test]
fn attribute_keys_match_the_standard() {
    let spot = [
        (attrs::PMIX_EVENT_HDLR_NAME, "pmix.evname"),
        (attrs::PMIX_EVENT_HDLR_FIRST, "pmix.evfirst"),
        (attrs::PMIX_EVENT_HDLR_LAST, "pmix.evlast"),
        (attrs::PMIX_EVENT_HDLR_FIRST_IN_CATEGORY, "pmix.evfirstcat"),
        (attrs::PMIX_EVENT_HDLR_LAST_IN_CATEGORY, "pmix.evlastcat"),
        (attrs::PMIX_EVENT_HDLR_BEFORE, "pmix.evbefore"),
        (attrs::PMIX_EVENT_HDLR_AFTER, "pmix.evafter"),
        (attrs::PMIX_EVENT_HDLR_PREPEND, "pmix.evprepend"),
        (attrs::PMIX_EVENT_HDLR_APPEND, "pmix.evappend"),
        (attrs::PMIX_EVENT_CUSTOM_RANGE, "pmix.evrange"),
        (attrs::PMIX_EVENT_AFFECTED_PROC, "pmix.evproc"),
        (attrs::PMIX_EVENT_AFFECTED_PROCS, "pmix.evaffected"),
        (attrs::PMIX_EVENT_NON_DEFAULT, "pmix.evnondef"),
        (attrs::PMIX_EVENT_RETURN_OBJECT, "pmix.evobject"),
        (attrs::PMIX_EVENT_TIMESTAMP, "pmix.evtstamp"),
        (attrs::PMIX_EVENT_TERMINATE_SESSION, "pmix.evterm.sess"),
        (attrs::PMIX_EVENT_ACTION_TIMEOUT, "pmix.evtimeout"),
        (attrs::PMIX_ALLOC_NUM_CPUS, "pmix.alloc.ncpus"),
        (attrs::PMIX_ALLOC_FABRIC_SEC_KEY, "pmix.alloc.nsec"),
        (attrs::PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, "pmix.jctrl.ckptsig"),
        // Deliberate deviation (docs/openpmix-differences.md): the Standard
        // text repeats the _SIGNAL key; OpenPMIx master uses this one.
        (
            attrs::PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT,
            "pmix.jctrl.ckpttime",
        ),
        (attrs::PMIX_MONITOR_HEARTBEAT, "pmix.monitor.mbeat"),
        (attrs::PMIX_SEND_HEARTBEAT, "pmix.monitor.beat"),
        (attrs::PMIX_LOG_STDERR, "pmix.log.stderr"),
        (attrs::PMIX_NODE_LOAD_AVG, "pmix.node.la"),
        // Not declared in the chapters; OpenPMIx's keys.
        (attrs::PMIX_RANGE, "pmix.range"),
        (attrs::PMIX_EVENT_JOB_LEVEL, "pmix.evjob"),
        (attrs::PMIX_EVENT_ENVIRO_LEVEL, "pmix.evenv"),
    ];
    for (k, want) in spot {
        assert_eq!(k.as_str(), want);
        assert!(
            ALL.iter().any(|a| a.key == want),
            "{want} missing from attrs::ALL"
        );
    }
}

// ---------------------------------------------------------------------------
// The attribute table against the Standard's chapters (parsed at test time)
// ---------------------------------------------------------------------------

fn spec_dir() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/spec");
    if d.is_dir() {
        Some(d)
    } else {
        println!(
            "note: {} not found; skipping the checks against the spec sources",
            d.display()
        );
        None
    }
}

fn spec_texts(dir: &PathBuf) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "tex"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), text)
        })
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no .tex files in {}", dir.display());
    v
}

/// A `\declareAttribute{NAME}{"key"}{type}{...}` line (also the NEW,
/// Provisional, ... variants).
#[derive(Debug)]
struct Declared {
    file: String,
    name: String,
    key: String,
    ty: String,
}

/// The first `n` brace groups at the start of `s`, without nesting (the name,
/// key and type groups never nest).
fn brace_groups(mut s: &str, n: usize) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    for _ in 0..n {
        s = s.strip_prefix('{')?;
        let end = s.find('}')?;
        out.push(&s[..end]);
        s = &s[end + 1..];
    }
    Some(out)
}

fn declared_attributes() -> Option<Vec<Declared>> {
    const MACRO: &str = "\\declareAttribute";
    let dir = spec_dir()?;
    let mut out = Vec::new();
    for (file, text) in spec_texts(&dir) {
        let mut rest = text.as_str();
        while let Some(i) = rest.find(MACRO) {
            rest = &rest[i + MACRO.len()..];
            let variant = rest
                .find(|c: char| !c.is_ascii_alphabetic())
                .unwrap_or(rest.len());
            let g = brace_groups(&rest[variant..], 3)
                .unwrap_or_else(|| panic!("{file}: unparsable {MACRO} near {:?}", &rest[..40]));
            let key = g[1]
                .strip_prefix('"')
                .and_then(|k| k.strip_suffix('"'))
                .unwrap_or_else(|| panic!("{file}: unquoted key {:?}", g[1]));
            out.push(Declared {
                file: file.clone(),
                name: g[0].to_owned(),
                key: key.to_owned(),
                ty: g[2].to_owned(),
            });
        }
    }
    Some(out)
}

#[test]
fn every_attribute_the_chapters_declare_is_in_the_table_with_its_key() {
    let Some(declared) = declared_attributes() else {
        return;
    };
    assert!(declared.len() >= 150, "parsed only {}", declared.len());
    let mut wrong = Vec::new();
    for d in &declared {
        let Some(ours) = ALL.iter().find(|a| a.name == d.name) else {
            wrong.push(format!("{}: {} missing", d.file, d.name));
            continue;
        };
        if d.name == "PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT" {
            // The documented deviation; fail if the spec text ever changes.
            assert_eq!(d.key, "pmix.jctrl.ckptsig");
            assert_eq!(ours.key, "pmix.jctrl.ckpttime");
        } else if ours.key != d.key {
            wrong.push(format!(
                "{}: {} is {:?}, the Standard says {:?}",
                d.file, d.name, ours.key, d.key
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Values a C caller would load for an attribute of the Standard's type.
fn values_of_spec_type(ty: &str) -> Option<Vec<Value>> {
    let ty: String = ty.chars().filter(|c| !c.is_whitespace()).collect();
    Some(match ty.as_str() {
        "bool" => vec![Value::Bool(true)],
        "char*" => vec![Value::String("x".into())],
        "int" | "int32_t" => vec![Value::Int(1)],
        "uint16_t" => vec![Value::Uint16(1)],
        "uint32_t" => vec![Value::Uint32(1)],
        "uint64_t" => vec![Value::Uint64(1)],
        "size_t" => vec![Value::Size(1)],
        "float" => vec![Value::Float(1.0)],
        "time_t" => vec![Value::Time(1)],
        "structtimeval" => vec![Value::Timeval(Timeval { sec: 1, usec: 0 })],
        // Loaded with a NULL pointer, as PMIX_POINTER or without a value.
        "void" => vec![Value::Pointer(0), Value::Undef],
        "void*" => vec![Value::Pointer(0x10)],
        "pmix_proc_t" | "pmix_proc_t*" => vec![Value::from(Proc::new("a", 1).unwrap())],
        "pmix_byte_object_t" => vec![Value::ByteObject(vec![1, 2])],
        _ => return None,
    })
}

fn is_array_type(ty: &str) -> bool {
    ty.trim().starts_with("pmix_data_array_t") || ty.trim() == "array"
}

#[test]
fn every_attribute_accepts_a_value_of_the_type_the_chapters_declare() {
    let Some(declared) = declared_attributes() else {
        return;
    };
    let arrays = [
        Value::DataArray(DataArray::Info(vec![])),
        Value::DataArray(DataArray::Proc(vec![Proc::new("a", 1).unwrap()])),
        Value::DataArray(DataArray::String(vec!["x".into()])),
        Value::DataArray(DataArray::Uint32(vec![1])),
    ];
    let mut wrong = Vec::new();
    for d in &declared {
        let Some(ours) = ALL.iter().find(|a| a.name == d.name) else {
            continue; // reported by the key test
        };
        if is_array_type(&d.ty) {
            // Some array of the right element type must pass.
            if !arrays.iter().any(|v| ours.ty.accepts(v)) {
                wrong.push(format!("{}: {:?} refuses every array", d.name, ours.ty));
            }
            continue;
        }
        let Some(values) = values_of_spec_type(&d.ty) else {
            wrong.push(format!("{}: unknown spec type {:?}", d.name, d.ty));
            continue;
        };
        for v in values {
            if !ours.ty.accepts(&v) {
                wrong.push(format!(
                    "{} ({}) is {:?}, which refuses {v:?}",
                    d.name, d.ty, ours.ty
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // A few of the table's own types, directly.
    assert!(AttrType::Uint32.accepts(&Value::Int(7)));
    assert!(!AttrType::Uint32.accepts(&Value::Int(-7)));
    assert!(!AttrType::Bool.accepts(&Value::String("true".into())));
}

#[test]
fn every_attribute_the_chapters_require_is_in_the_table() {
    // `\pasteAttributeItem{NAME}` lists (required/optional attributes of an
    // API) also name attributes declared in other chapters (PMIX_RANGE,
    // PMIX_USERID, ...).
    let Some(dir) = spec_dir() else {
        return;
    };
    const MACRO: &str = "\\pasteAttributeItem";
    let mut pasted = HashSet::new();
    for (_, text) in spec_texts(&dir) {
        let mut rest = text.as_str();
        while let Some(i) = rest.find(MACRO) {
            rest = &rest[i + MACRO.len()..];
            let g = brace_groups(rest, 1).expect("pasteAttributeItem{NAME}");
            pasted.insert(g[0].to_owned());
        }
    }
    assert!(pasted.len() >= 50, "parsed only {}", pasted.len());
    let missing: Vec<_> = pasted
        .iter()
        .filter(|n| !ALL.iter().any(|a| a.name == n.as_str()))
        .collect();
    assert!(missing.is_empty(), "missing from attrs::ALL: {missing:?}");
}

use super::*;

fn canon(s: &str) -> String {
    Quantity::parse(s).unwrap().to_string()
}

fn rounded(s: &str) -> String {
    let mut q = Quantity::parse(s).unwrap();
    q.round_up_milli();
    q.to_string()
}

#[test]
fn canonical_forms_match_apimachinery() {
    let cases = [
        ("0", "0"),
        ("0.5", "500m"),
        ("1000m", "1"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("100M", "100M"),
        ("1000", "1k"),
        ("1e3", "1e3"),
        ("1.5e3", "1500"),
        ("1000000", "1M"),
        ("1.5", "1500m"),
        ("0.001", "1m"),
        ("1m", "1m"),
        ("100m", "100m"),
        ("12Mi", "12Mi"),
        ("0.5Ki", "512"),
        ("1.1Ki", "1126400m"),
        ("2048", "2048"),
        ("2048Ki", "2Mi"),
        ("-1", "-1"),
        ("-1000m", "-1"),
        ("-1024Mi", "-1Gi"),
        ("0.0000000001", "1n"),
        ("1n", "1n"),
        ("1000n", "1u"),
        ("8Ei", "9223372036854775807"),
        ("5Gi", "5Gi"),
        ("128974848", "128974848"),
        ("129e6", "129e6"),
        ("129M", "129M"),
        ("123Mi", "123Mi"),
        (".5", "500m"),
        ("1.", "1."),
        ("-0", "0"),
        ("0m", "0"),
        ("1E", "1E"),
        ("1000E", "1e21"),
    ];
    for (input, want) in cases {
        assert_eq!(canon(input), want, "input {input}");
    }
}

#[test]
fn fast_path_remembers_the_input() {
    assert_eq!(canon("+1k"), "+1k");
    assert_eq!(canon("01k"), "01k");
    assert_eq!(canon("1.500"), "1.500");
    assert_eq!(canon("1E3"), "1E3");
    assert_eq!(Quantity::parse("1E3").unwrap().canonical(), "1e3");
    assert_eq!(canon("1025Ki"), "1025Ki");
}

#[test]
fn rounds_up_to_milli() {
    assert_eq!(rounded("0.1m"), "1m");
    assert_eq!(rounded("1.0001"), "1001m");
    assert_eq!(rounded("-0.1m"), "-1m");
    assert_eq!(rounded("1n"), "1m");
    assert_eq!(rounded("100m"), "100m");
    assert_eq!(rounded("+1k"), "+1k");
    assert_eq!(rounded("1.000001"), "1001m");
    assert_eq!(rounded("1Gi"), "1Gi");
}

#[test]
fn rejects_what_apimachinery_rejects() {
    for bad in ["", "1x", "1Kb", "1k2", "abc", "1e", "1e+", "--1", "1 k"] {
        assert!(Quantity::parse(bad).is_err(), "{bad} should fail");
    }
    // Degenerate inputs apimachinery accepts as zero.
    assert_eq!(canon("+"), "0");
    assert_eq!(canon("."), "0");
}

#[test]
fn json_numbers_and_strings() {
    let q = |v: Value| Quantity::from_json(&v).unwrap().unwrap().to_string();
    assert_eq!(q(serde_json::json!(1)), "1");
    assert_eq!(q(serde_json::json!(1.5)), "1500m");
    assert_eq!(q(serde_json::json!(1000)), "1k");
    assert_eq!(q(serde_json::json!(" 2Gi ")), "2Gi");
    assert!(Quantity::from_json(&serde_json::json!(true)).is_none());
    assert!(Quantity::from_json(&Value::Null).is_none());
}

#[test]
fn huge_values_do_not_panic() {
    for s in [
        "1e100",
        "99999999999999999999999999999999999999999",
        "1e-100",
        "9Ei",
        "1e2147483647",
    ] {
        let _ = Quantity::parse(s);
    }
    assert_eq!(canon("1e-100"), "1e-9");
}

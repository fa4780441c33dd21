use super::*;

fn quantity(text: &str) -> CalcValue {
    CalcValue::Quantity(Quantity::parse(text).unwrap())
}

/// The result as upstream prints it (`Quantity.String()` or `%g`).
fn eval(text: &str, variable: &str, value: CalcValue) -> Result<String, CalcError> {
    evaluate(text, variable, &value).map(|v| match v {
        CalcValue::Quantity(q) => q.to_string(),
        CalcValue::Number(n) => go_g(n),
    })
}

#[test]
fn upstream_examples() {
    let none = CalcValue::Number(1.0);
    assert_eq!(
        eval("(200m+400m)*50%", "cpu", none.clone()),
        Ok("300m".into())
    );
    assert_eq!(
        eval("max(cpu*50%, 50m)", "cpu", quantity("100m")),
        Ok("50m".into())
    );
    assert_eq!(
        eval(
            "max(memory*20% + 100Mi, 200Mi)",
            "memory",
            quantity("800Mi")
        ),
        Ok("260Mi".into())
    );
    assert_eq!(eval("500m", "cpu", none.clone()), Ok("500m".into()));
    assert_eq!(eval("1Gi", "memory", none), Ok("1Gi".into()));
    assert_eq!(
        eval(
            "min(max(max(max(0.5,0.5*cpu),cpu-1.0),cpu-1.0),3.0)",
            "cpu",
            quantity("4")
        ),
        Ok("3".into())
    );
}

#[test]
fn numbers_percentages_and_precedence() {
    let one = || CalcValue::Number(1.0);
    assert_eq!(eval("1 + 2 * 3", "cpu", one()), Ok("7".into()));
    assert_eq!(eval("(1 + 2) * 3", "cpu", one()), Ok("9".into()));
    assert_eq!(eval("8 - 2 - 1", "cpu", one()), Ok("5".into()));
    assert_eq!(eval("-2 * -3", "cpu", one()), Ok("6".into()));
    assert_eq!(eval("2 - -3", "cpu", one()), Ok("5".into()));
    assert_eq!(eval("50% * 4", "cpu", one()), Ok("2".into()));
    assert_eq!(eval("1e3", "cpu", one()), Ok("1000".into()));
    assert_eq!(eval(".5 + 1.5e1", "cpu", one()), Ok("15.5".into()));
    assert_eq!(eval("CPU * 3", "cpu", one()), Ok("3".into()));
    assert_eq!(eval("MAX(1, 2)", "cpu", one()), Ok("2".into()));
    // A number with letters Go's ParseFloat refuses counts as 0, as upstream ignores the error.
    assert_eq!(eval("2x + 1", "cpu", one()), Ok("1".into()));
}

#[test]
fn quantities_mix_with_numbers_in_milli_units() {
    let one = || CalcValue::Number(1.0);
    // A number next to a quantity is that many whole units.
    assert_eq!(eval("100m + 1", "cpu", one()), Ok("1100m".into()));
    assert_eq!(eval("1Gi / 4", "memory", one()), Ok("256Mi".into()));
    assert_eq!(eval("min(1Gi, 2)", "memory", one()), Ok("2".into()));
    assert_eq!(eval("max(2, 100m)", "cpu", one()), Ok("2".into()));
    // The result keeps the quantity's format: binary stays binary when whole.
    assert_eq!(eval("1Gi * 1.5", "memory", one()), Ok("1536Mi".into()));
    assert_eq!(eval("1 - 200m", "cpu", one()), Ok("800m".into()));
}

#[test]
fn errors_as_upstream() {
    let one = || CalcValue::Number(1.0);
    let cases = [
        ("1Gi * 1Gi", CalcError::QuantityProduct),
        ("1 / 1m", CalcError::DivisionByQuantity),
        ("1m / 0", CalcError::DivisionByZero),
        ("4 / (cpu - 1)", CalcError::DivisionByZero),
        ("avg(1, 2)", CalcError::UnknownFunction("avg".into())),
        ("Max(1)", CalcError::Arity("max".into(), 1)),
        ("memory + 1", CalcError::UndefinedVariable("memory".into())),
        ("cpu - 2", CalcError::Negative("-1".into())),
        ("-500m", CalcError::Negative("-500m".into())),
        ("", CalcError::Syntax),
        ("1 +", CalcError::Syntax),
        ("max(1, 2, 3)", CalcError::Syntax),
        ("(1", CalcError::Syntax),
        ("1 2", CalcError::Syntax),
        ("1 % 2", CalcError::Syntax),
        ("1.5.3", CalcError::Syntax),
    ];
    for (text, error) in cases {
        assert_eq!(evaluate(text, "cpu", &one()), Err(error), "{text}");
    }
    assert!(matches!(
        evaluate("1e3m", "cpu", &one()),
        Err(CalcError::Quantity(_))
    ));
    let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
    assert_eq!(evaluate(&deep, "cpu", &one()), Err(CalcError::TooDeep));
    let negations = format!("{}1", "-".repeat(200));
    assert_eq!(evaluate(&negations, "cpu", &one()), Err(CalcError::TooDeep));
}

#[test]
fn any_text_gets_an_answer() {
    for text in [
        "1é",
        "é",
        "2Mé",
        "µ",
        "1\u{a0}+\u{85}1",
        "ÿ(1)",
        "1e+",
        "1E-3m",
    ] {
        let _ = evaluate(text, "cpu", &CalcValue::Number(1.0));
    }
    // UTF-8 NBSP is two Latin-1 characters: the letter Â ends the number `1Â` (0, as Go's
    // ParseFloat refuses it), then the NBSP is a space.
    assert_eq!(
        eval("1\u{a0}+ 1", "cpu", CalcValue::Number(1.0)),
        Ok("1".into())
    );
}

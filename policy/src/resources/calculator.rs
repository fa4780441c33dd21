//! Kruise's resource-expression calculator (`pkg/util/calculator`, §3.7.7): numbers, percentages,
//! Kubernetes quantities, the variables `cpu`/`memory`, `max`/`min`, `+ - * /`, parentheses and
//! unary minus, with the yacc grammar's precedence and the same quantity arithmetic.

use crate::quantity::Quantity;

/// A calculator value: a plain number or a quantity.
#[derive(Debug, Clone, PartialEq)]
pub enum CalcValue {
    Number(f64),
    Quantity(Quantity),
}

/// Why an expression has no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CalcError {
    #[error("parse error: syntax error")]
    Syntax,
    #[error("expression nested too deeply")]
    TooDeep,
    #[error("undefined variable: {0}")]
    UndefinedVariable(String),
    #[error("unknown function: {0}")]
    UnknownFunction(String),
    #[error("{0} function requires exactly 2 arguments, got {1}")]
    Arity(String, usize),
    #[error("multiplication of two quantities")]
    QuantityProduct,
    #[error("division by quantity")]
    DivisionByQuantity,
    #[error("division by zero")]
    DivisionByZero,
    #[error("{0}")]
    Quantity(String),
    #[error("calculation result is negative: {0}")]
    Negative(String),
}

/// Evaluates `text` with one variable bound (its name lower-case), as `Calculator.Parse` does:
/// a negative result is an error.
pub fn evaluate(text: &str, variable: &str, value: &CalcValue) -> Result<CalcValue, CalcError> {
    let tokens = tokenize(text);
    let mut parser = Parser {
        tokens: &tokens,
        pos: 0,
        variable,
        value,
        depth: 0,
    };
    let result = parser.expr()?;
    if parser.pos != tokens.len() {
        return Err(CalcError::Syntax);
    }
    match &result {
        CalcValue::Quantity(q) if q.is_negative() => Err(CalcError::Negative(q.to_string())),
        CalcValue::Number(n) if *n < 0.0 => Err(CalcError::Negative(go_g(*n))),
        _ => Ok(result),
    }
}

/// Go's `%g` for the negative-result message (shortest round-trip digits).
fn go_g(n: f64) -> String {
    let text = format!("{n}");
    text.strip_suffix(".0").map(str::to_string).unwrap_or(text)
}

/// Token text is bytes: a unit or name may end inside a multi-byte character, as in Go.
#[derive(Debug, Clone, PartialEq)]
enum Token<'a> {
    Number(&'a [u8]),
    Quantity(&'a [u8]),
    Ident(&'a [u8]),
    Op(u8),
    /// A byte the grammar has no place for: always a syntax error.
    Other,
}

/// The lexer works on bytes, each read as a Latin-1 character (as `rune(input[pos])` does).
fn class(b: u8) -> char {
    char::from(b)
}

fn tokenize(text: &str) -> Vec<Token<'_>> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let c = class(bytes[pos]);
        if c.is_whitespace() {
            pos += 1;
            continue;
        }
        match bytes[pos] {
            op @ (b'+' | b'-' | b'*' | b'/' | b'(' | b')' | b',') => {
                tokens.push(Token::Op(op));
                pos += 1;
            }
            b'.' | b'0'..=b'9' => {
                let end = read_number(bytes, pos);
                let number = &bytes[pos..end];
                tokens.push(if is_quantity(number) {
                    Token::Quantity(number)
                } else {
                    Token::Number(number)
                });
                pos = end;
            }
            _ if c.is_alphabetic() => {
                let start = pos;
                while pos < bytes.len() && {
                    let c = class(bytes[pos]);
                    c.is_alphabetic() || c.is_ascii_digit() || c == '_'
                } {
                    pos += 1;
                }
                tokens.push(Token::Ident(&bytes[start..pos]));
            }
            _ => {
                tokens.push(Token::Other);
                pos += 1;
            }
        }
    }
    tokens
}

/// The lexer's `readNumber`: digits, one dot, one exponent (with a sign right after it), then
/// either a closing `%` or a run of letters (the unit).
fn read_number(bytes: &[u8], start: usize) -> usize {
    let (mut seen_dot, mut seen_e, mut expect_exponent) = (false, false, false);
    let mut pos = start;
    while let Some(&b) = bytes.get(pos) {
        match b {
            b'0'..=b'9' => expect_exponent = false,
            b'.' if !seen_dot && !seen_e => seen_dot = true,
            b'e' | b'E' if !seen_e => {
                seen_e = true;
                expect_exponent = true;
            }
            b'+' | b'-' if expect_exponent => expect_exponent = false,
            b'%' => return pos + 1,
            _ if class(b).is_alphabetic() && !expect_exponent && b != b'e' && b != b'E' => {
                while bytes.get(pos).is_some_and(|&b| class(b).is_alphabetic()) {
                    pos += 1;
                }
                return pos;
            }
            _ => return pos,
        }
        pos += 1;
    }
    pos
}

/// The lexer's `isQuantity`: a numeric part followed by exactly one of the supported units.
fn is_quantity(text: &[u8]) -> bool {
    let numeric = |b: &u8| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-');
    let Some(unit_start) = text.iter().position(|b| !numeric(b)) else {
        return false;
    };
    unit_start > 0
        && matches!(
            &text[unit_start..],
            b"m" | b"k" | b"M" | b"G" | b"T" | b"P" | b"Ki" | b"Mi" | b"Gi" | b"Ti" | b"Pi"
        )
}

/// Token bytes as text; bytes that are not UTF-8 never name anything the calculator knows.
fn text_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `parseNumber`: a float, or a percentage of one; text Go cannot read counts as 0.
fn number_value(bytes: &[u8]) -> f64 {
    let text = text_of(bytes);
    match text.strip_suffix('%') {
        Some(number) => number.parse::<f64>().map_or(0.0, |n| n / 100.0),
        None => text.parse::<f64>().unwrap_or(0.0),
    }
}

const MAX_DEPTH: usize = 64;

struct Parser<'t, 'a> {
    tokens: &'t [Token<'a>],
    pos: usize,
    variable: &'t str,
    value: &'t CalcValue,
    depth: usize,
}

impl Parser<'_, '_> {
    fn peek_op(&self) -> Option<u8> {
        match self.tokens.get(self.pos) {
            Some(Token::Op(op)) => Some(*op),
            _ => None,
        }
    }

    fn consume(&mut self, op: u8) -> Result<(), CalcError> {
        if self.peek_op() == Some(op) {
            self.pos += 1;
            Ok(())
        } else {
            Err(CalcError::Syntax)
        }
    }

    fn expr(&mut self) -> Result<CalcValue, CalcError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(CalcError::TooDeep);
        }
        let mut left = self.term()?;
        while let Some(op @ (b'+' | b'-')) = self.peek_op() {
            self.pos += 1;
            let right = self.term()?;
            left = add_or_sub(left, right, op == b'-');
        }
        self.depth -= 1;
        Ok(left)
    }

    fn term(&mut self) -> Result<CalcValue, CalcError> {
        let mut left = self.factor()?;
        while let Some(op @ (b'*' | b'/')) = self.peek_op() {
            self.pos += 1;
            let right = self.factor()?;
            left = if op == b'*' {
                multiply(left, right)?
            } else {
                divide(left, right)?
            };
        }
        Ok(left)
    }

    fn factor(&mut self) -> Result<CalcValue, CalcError> {
        let token = self.tokens.get(self.pos).ok_or(CalcError::Syntax)?;
        self.pos += 1;
        match token {
            Token::Number(text) => Ok(CalcValue::Number(number_value(text))),
            Token::Quantity(text) => Quantity::parse(&text_of(text))
                .map(CalcValue::Quantity)
                .map_err(|e| CalcError::Quantity(e.to_string())),
            Token::Op(b'(') => {
                let value = self.expr()?;
                self.consume(b')')?;
                Ok(value)
            }
            Token::Op(b'-') => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(CalcError::TooDeep);
                }
                let value = self.factor()?;
                self.depth -= 1;
                Ok(match value {
                    CalcValue::Number(n) => CalcValue::Number(-n),
                    CalcValue::Quantity(mut q) => {
                        q.neg();
                        CalcValue::Quantity(q)
                    }
                })
            }
            Token::Ident(name) if self.peek_op() == Some(b'(') => {
                let name = text_of(name);
                self.pos += 1;
                let mut args = vec![self.expr()?];
                if self.peek_op() == Some(b',') {
                    self.pos += 1;
                    args.push(self.expr()?);
                }
                self.consume(b')')?;
                call(&name, args)
            }
            Token::Ident(name) if text_of(name).to_lowercase() == self.variable => {
                Ok(self.value.clone())
            }
            Token::Ident(name) => Err(CalcError::UndefinedVariable(text_of(name).to_lowercase())),
            Token::Op(_) | Token::Other => Err(CalcError::Syntax),
        }
    }
}

/// `toQuantity`: a number as `NewMilliQuantity(int64(n*1000), DecimalSI)`.
fn to_quantity(value: CalcValue) -> Quantity {
    match value {
        CalcValue::Quantity(q) => q,
        CalcValue::Number(n) => Quantity::from_milli((n * 1000.0) as i64),
    }
}

fn add_or_sub(left: CalcValue, right: CalcValue, subtract: bool) -> CalcValue {
    match (left, right) {
        (CalcValue::Number(a), CalcValue::Number(b)) => {
            CalcValue::Number(if subtract { a - b } else { a + b })
        }
        (left, right) => {
            let mut sum = to_quantity(left);
            let mut right = to_quantity(right);
            if subtract {
                right.neg();
            }
            sum.add(&right);
            CalcValue::Quantity(sum)
        }
    }
}

/// A quantity's milli value scaled by `factor`, truncated as Go's `int64(float64)` does.
fn scaled(mut q: Quantity, factor: impl Fn(f64) -> f64) -> CalcValue {
    let milli = factor(q.milli_value_i64() as f64) as i64;
    q.set_milli(milli);
    CalcValue::Quantity(q)
}

fn multiply(left: CalcValue, right: CalcValue) -> Result<CalcValue, CalcError> {
    match (left, right) {
        (CalcValue::Quantity(_), CalcValue::Quantity(_)) => Err(CalcError::QuantityProduct),
        (CalcValue::Quantity(q), CalcValue::Number(n))
        | (CalcValue::Number(n), CalcValue::Quantity(q)) => Ok(scaled(q, |m| m * n)),
        (CalcValue::Number(a), CalcValue::Number(b)) => Ok(CalcValue::Number(a * b)),
    }
}

fn divide(left: CalcValue, right: CalcValue) -> Result<CalcValue, CalcError> {
    match (left, right) {
        (_, CalcValue::Quantity(_)) => Err(CalcError::DivisionByQuantity),
        (_, CalcValue::Number(0.0)) => Err(CalcError::DivisionByZero),
        (CalcValue::Quantity(q), CalcValue::Number(n)) => Ok(scaled(q, |m| m / n)),
        (CalcValue::Number(a), CalcValue::Number(b)) => Ok(CalcValue::Number(a / b)),
    }
}

/// `max`/`min` of two values; a number against a quantity becomes a milli quantity first.
fn call(name: &str, args: Vec<CalcValue>) -> Result<CalcValue, CalcError> {
    let (want_max, lower) = match name.to_lowercase().as_str() {
        "max" => (true, "max"),
        "min" => (false, "min"),
        _ => return Err(CalcError::UnknownFunction(name.to_string())),
    };
    let count = args.len();
    let mut args = args.into_iter();
    let (Some(left), Some(right)) = (args.next(), args.next()) else {
        return Err(CalcError::Arity(lower.to_string(), count));
    };
    // Ties go to the left argument, as upstream's `>=` / `<=`.
    let left_wins = |ordering: std::cmp::Ordering| {
        if want_max {
            ordering.is_ge()
        } else {
            ordering.is_le()
        }
    };
    Ok(match (left, right) {
        // A NaN compares false both ways in Go: the right argument wins.
        (CalcValue::Number(a), CalcValue::Number(b)) => {
            let left = a.partial_cmp(&b).is_some_and(left_wins);
            CalcValue::Number(if left { a } else { b })
        }
        (left, right) => {
            let (left, right) = (to_quantity(left), to_quantity(right));
            let winner = if left_wins(left.cmp_value(&right)) {
                left
            } else {
                right
            };
            CalcValue::Quantity(winner)
        }
    })
}

#[cfg(test)]
mod tests;

//! The resourcesPolicy checks of §2.2 rules 10/11 and a checker for the calculator language of
//! §3.7.7 (syntax, variables, functions and their arity, quantity/number typing).

use super::errors::FieldError;
use crate::api::SidecarContainer;
use serde_json::Value;

/// Checks one container's `resourcesPolicy` (kept as JSON). `path` is the container's path.
pub fn validate_resources_policy(
    container: &SidecarContainer,
    policy: &Value,
    path: &str,
) -> Vec<FieldError> {
    let field = format!("{path}.resourcesPolicy");
    let resources = container.container.get("resources");
    let non_empty = |key: &str| {
        resources
            .and_then(|r| r.get(key))
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
    };
    if non_empty("limits") || non_empty("requests") {
        return vec![FieldError::forbidden(
            field,
            "resources and resourcesPolicy cannot be configured together",
        )];
    }
    let Some(policy) = policy.as_object() else {
        return vec![FieldError::invalid(field, "…", "must be an object")];
    };
    let mut errs = Vec::new();
    let regex = policy
        .get("targetContainersNameRegex")
        .and_then(Value::as_str)
        .unwrap_or("");
    if regex.is_empty() {
        errs.push(FieldError::required(
            format!("{field}.targetContainersNameRegex"),
            "targetContainersNameRegex must be set",
        ));
    } else if let Err(e) = regex_lite::Regex::new(regex) {
        errs.push(FieldError::invalid_str(
            format!("{field}.targetContainersNameRegex"),
            regex,
            &format!("invalid regex: {e}"),
        ));
    }
    let expr = policy.get("resourcesExpr").and_then(Value::as_object);
    let limits = expr.and_then(|e| e.get("limits")).filter(|v| !v.is_null());
    let requests = expr
        .and_then(|e| e.get("requests"))
        .filter(|v| !v.is_null());
    if limits.is_none() && requests.is_none() {
        errs.push(FieldError::required(
            format!("{field}.resourcesExpr"),
            "at least one of limits or requests must be set",
        ));
    }
    for (name, part) in [("limits", limits), ("requests", requests)] {
        for resource in ["cpu", "memory"] {
            let text = part
                .and_then(|p| p.get(resource))
                .and_then(Value::as_str)
                .unwrap_or("");
            if text.is_empty() {
                continue;
            }
            if let Err(reason) = check_expression(text, resource) {
                errs.push(FieldError::invalid_str(
                    format!("{field}.resourcesExpr.{name}.{resource}"),
                    text,
                    &format!("invalid expression: {reason}"),
                ));
            }
        }
    }
    errs
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Ty {
    Number,
    Quantity,
}

#[derive(Debug, PartialEq)]
enum Token {
    Number(Ty),
    Ident(String),
    Op(char),
}

const UNITS: [&str; 11] = ["Ki", "Mi", "Gi", "Ti", "Pi", "m", "k", "M", "G", "T", "P"];

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_digit() || *c == '.')
            {
                i += 1;
            }
            if chars.get(i).is_some_and(|c| *c == 'e' || *c == 'E')
                && chars
                    .get(i + 1)
                    .is_some_and(|c| c.is_ascii_digit() || *c == '-' || *c == '+')
            {
                i += 2;
                while chars.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
            }
            let literal: String = chars.get(start..i).unwrap_or(&[]).iter().collect();
            if literal.parse::<f64>().is_err() {
                return Err(format!("invalid number {literal:?}"));
            }
            let rest = chars.get(i..).unwrap_or(&[]);
            let unit = UNITS.iter().find(|u| {
                let u: Vec<char> = u.chars().collect();
                rest.starts_with(&u)
            });
            if rest.first() == Some(&'%') {
                i += 1;
                tokens.push(Token::Number(Ty::Number));
            } else if let Some(unit) = unit {
                i += unit.len();
                tokens.push(Token::Number(Ty::Quantity));
            } else {
                tokens.push(Token::Number(Ty::Number));
            }
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            let ident: String = chars.get(start..i).unwrap_or(&[]).iter().collect();
            tokens.push(Token::Ident(ident.to_lowercase()));
        } else if "+-*/(),".contains(c) {
            tokens.push(Token::Op(c));
            i += 1;
        } else {
            return Err(format!("unexpected character {c:?}"));
        }
    }
    Ok(tokens)
}

struct Parser<'a> {
    tokens: &'a [Token],
    pos: usize,
    variable: &'a str,
    depth: usize,
}

impl Parser<'_> {
    fn peek_op(&self) -> Option<char> {
        match self.tokens.get(self.pos) {
            Some(Token::Op(c)) => Some(*c),
            _ => None,
        }
    }

    fn consume(&mut self, op: char) -> Result<(), String> {
        if self.peek_op() == Some(op) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("expected {op:?}"))
        }
    }

    fn expr(&mut self) -> Result<Ty, String> {
        self.depth += 1;
        if self.depth > 64 {
            return Err("expression nested too deeply".into());
        }
        let mut ty = self.term()?;
        while let Some('+' | '-') = self.peek_op() {
            self.pos += 1;
            let rhs = self.term()?;
            ty = promote(ty, rhs);
        }
        self.depth -= 1;
        Ok(ty)
    }

    fn term(&mut self) -> Result<Ty, String> {
        let mut ty = self.unary()?;
        while let Some(op @ ('*' | '/')) = self.peek_op() {
            self.pos += 1;
            let rhs = self.unary()?;
            ty = match (op, ty, rhs) {
                ('*', Ty::Quantity, Ty::Quantity) => {
                    return Err("cannot multiply two quantities".into());
                }
                ('/', _, Ty::Quantity) => return Err("cannot divide by a quantity".into()),
                _ => promote(ty, rhs),
            };
        }
        Ok(ty)
    }

    fn unary(&mut self) -> Result<Ty, String> {
        if self.peek_op() == Some('-') {
            self.pos += 1;
            self.depth += 1;
            if self.depth > 64 {
                return Err("expression nested too deeply".into());
            }
            let ty = self.unary();
            self.depth -= 1;
            return ty;
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Ty, String> {
        let token = self
            .tokens
            .get(self.pos)
            .ok_or("unexpected end of expression")?;
        self.pos += 1;
        match token {
            Token::Number(ty) => Ok(*ty),
            Token::Op('(') => {
                let ty = self.expr()?;
                self.consume(')')?;
                Ok(ty)
            }
            Token::Op(c) => Err(format!("unexpected {c:?}")),
            Token::Ident(name) if self.peek_op() == Some('(') => {
                if name != "max" && name != "min" {
                    return Err(format!("unknown function {name:?}"));
                }
                self.pos += 1;
                let a = self.expr()?;
                self.consume(',')
                    .map_err(|_| format!("{name} takes exactly two arguments"))?;
                let b = self.expr()?;
                self.consume(')')
                    .map_err(|_| format!("{name} takes exactly two arguments"))?;
                Ok(promote(a, b))
            }
            Token::Ident(name) if name == self.variable => Ok(Ty::Number),
            Token::Ident(name) => Err(format!("undefined variable {name:?}")),
        }
    }
}

fn promote(a: Ty, b: Ty) -> Ty {
    if a == Ty::Quantity || b == Ty::Quantity {
        Ty::Quantity
    } else {
        Ty::Number
    }
}

/// Whether `text` parses and type-checks with one numeric variable named `variable`.
/// Values are not evaluated (so e.g. a division by a literal zero is not detected).
pub fn check_expression(text: &str, variable: &str) -> Result<(), String> {
    let tokens = tokenize(text)?;
    let mut parser = Parser {
        tokens: &tokens,
        pos: 0,
        variable,
        depth: 0,
    };
    parser.expr()?;
    if parser.pos != tokens.len() {
        return Err("unexpected trailing input".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions() {
        for ok in [
            "cpu*50%",
            "(200m+400m)*50%",
            "max(cpu*50%, 50m)",
            "500m",
            "1Gi",
            "-cpu + 1e3",
            "min(CPU, 2)",
        ] {
            assert_eq!(check_expression(ok, "cpu"), Ok(()), "{ok}");
        }
        assert_eq!(
            check_expression("max(memory*20% + 100Mi, 200Mi)", "memory"),
            Ok(())
        );
        for bad in [
            "",
            "cpu*",
            "memory*50%",
            "foo(cpu, 1)",
            "max(cpu)",
            "max(cpu, 1, 2)",
            "1Gi*1Gi",
            "cpu/1m",
            "(cpu",
            "cpu cpu",
            "cpu $ 1",
        ] {
            assert!(check_expression(bad, "cpu").is_err(), "{bad}");
        }
        let deep = format!("{}cpu{}", "(".repeat(500), ")".repeat(500));
        assert!(check_expression(&deep, "cpu").is_err());
    }
}

//! The author's numbers a finding encodes, written from the numbers the
//! claim quotes: a plain number (`1229.65`), or arithmetic over them
//! (`"7971773 / 5.6M"`, `"25000 / 200"`), with `mid(A, B)` for the middle
//! of a range on a log scale (`"mid(4, 16)"`: the author's "4-16 KiB")
//! and `N@ID` for a number another claim of the same seed quotes
//! (`"50435@002-a"`). A literal may carry `k`, `M` or `G` (10^3, 10^6,
//! 10^9). The value is what the rule measures fslab against; the
//! literals are what the built-ins' test finds in experiments/CLAIMS.md,
//! claim by claim, so that no number enters a finding that its author
//! did not give.

use serde::Deserialize;

/// A number of the author's as a finding states it: its text and value.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AuthorNumber {
    /// As written in the experiment file (`7971773 / 5.6M`).
    pub text: String,
    pub value: f64,
}

impl AuthorNumber {
    /// Its words: a number as written (`46k`, `80k@004-a`), or the value
    /// of arithmetic with how it was made (`1.424 = 7971773 / 5.6M`).
    pub fn words(&self) -> String {
        let one = literals(&self.text).is_ok_and(|l| l.len() == 1 && l[0].text == self.text.trim());
        if one {
            self.text.clone()
        } else {
            format!("{} = {}", fslab_stats::fmt_g(self.value, 4), self.text)
        }
    }
}

/// One number literal of an author's number: `5.6M` is mantissa 5.6,
/// value 5.6e6; `50435@002-a` names the claim that quotes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Literal {
    pub text: String,
    pub mantissa: f64,
    pub value: f64,
    pub claim: Option<String>,
}

/// Why an author's number's text is not one, said with the text
/// (`"4 -": a number is missing at the end`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NumberError {
    /// The text does not parse.
    #[error("{text:?}: {why}")]
    Syntax {
        text: String,
        #[source]
        why: Syntax,
    },
    /// It parses, to zero, a negative number or no number at all.
    #[error("{text:?} is {value}, not a number above 0")]
    NotAbove0 { text: String, value: f64 },
}

/// Where and why the arithmetic does not parse (positions count from 1).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Syntax {
    #[error("expected {expected:?} at {at}")]
    Expected { expected: char, at: usize },
    #[error("unexpected {found:?} at {at}")]
    Unexpected { found: char, at: usize },
    #[error("a number is missing at the end")]
    Missing,
    #[error("{0:?} is not a number")]
    NotANumber(String),
}

/// How the file gives it: a TOML number or a string of arithmetic.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(super) enum NumberSpec {
    Number(f64),
    Text(String),
}

impl NumberSpec {
    /// The number, or why its text is not one.
    pub(super) fn resolve(&self) -> Result<AuthorNumber, NumberError> {
        match self {
            NumberSpec::Number(x) => Ok(AuthorNumber {
                text: fslab_stats::fmt_g(*x, 12),
                value: *x,
            }),
            NumberSpec::Text(t) => Ok(AuthorNumber {
                text: t.trim().to_string(),
                value: eval(t)?.0,
            }),
        }
    }
}

/// The literals of an author's number's text (a plain number is its own).
pub fn literals(text: &str) -> Result<Vec<Literal>, NumberError> {
    Ok(eval(text)?.1)
}

/// Evaluates `text`: its value and its literals.
pub fn eval(text: &str) -> Result<(f64, Vec<Literal>), NumberError> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        lits: Vec::new(),
    };
    let syntax = |why| NumberError::Syntax {
        text: text.to_string(),
        why,
    };
    let v = p.expr().map_err(syntax)?;
    p.space();
    if p.i != p.s.len() {
        return Err(syntax(Syntax::Unexpected {
            found: char::from(p.s[p.i]),
            at: p.i + 1,
        }));
    }
    if !(v.is_finite() && v > 0.0) {
        return Err(NumberError::NotAbove0 {
            text: text.to_string(),
            value: v,
        });
    }
    Ok((v, p.lits))
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    lits: Vec<Literal>,
}

impl Parser<'_> {
    fn space(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.space();
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> Result<(), Syntax> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(Syntax::Expected {
                expected: char::from(c),
                at: self.i + 1,
            })
        }
    }

    fn expr(&mut self) -> Result<f64, Syntax> {
        let mut v = self.term()?;
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.i += 1;
            let r = self.term()?;
            v = if op == b'+' { v + r } else { v - r };
        }
        Ok(v)
    }

    fn term(&mut self) -> Result<f64, Syntax> {
        let mut v = self.factor()?;
        while let Some(op @ (b'*' | b'/')) = self.peek() {
            self.i += 1;
            let r = self.factor()?;
            v = if op == b'*' { v * r } else { v / r };
        }
        Ok(v)
    }

    fn factor(&mut self) -> Result<f64, Syntax> {
        match self.peek() {
            Some(b'(') => {
                self.i += 1;
                let v = self.expr()?;
                self.eat(b')')?;
                Ok(v)
            }
            Some(b'm') if self.s[self.i..].starts_with(b"mid(") => {
                self.i += 4;
                let a = self.expr()?;
                self.eat(b',')?;
                let b = self.expr()?;
                self.eat(b')')?;
                Ok((a * b).sqrt())
            }
            Some(c) if c.is_ascii_digit() => self.literal(),
            Some(c) => Err(Syntax::Unexpected {
                found: char::from(c),
                at: self.i + 1,
            }),
            None => Err(Syntax::Missing),
        }
    }

    fn literal(&mut self) -> Result<f64, Syntax> {
        let start = self.i;
        while self.i < self.s.len() && (self.s[self.i].is_ascii_digit() || self.s[self.i] == b'.') {
            self.i += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.i]).unwrap_or_default();
        let mantissa: f64 = digits
            .parse()
            .map_err(|_| Syntax::NotANumber(digits.to_string()))?;
        let scale = match self.s.get(self.i) {
            Some(b'k' | b'K') => 1e3,
            Some(b'M') => 1e6,
            Some(b'G') => 1e9,
            _ => 1.0,
        };
        if scale != 1.0 {
            self.i += 1;
        }
        let mut claim = None;
        if self.s.get(self.i) == Some(&b'@') {
            self.i += 1;
            let c0 = self.i;
            while self.i < self.s.len()
                && (self.s[self.i].is_ascii_alphanumeric() || matches!(self.s[self.i], b'-' | b'.'))
            {
                self.i += 1;
            }
            claim = Some(String::from_utf8_lossy(&self.s[c0..self.i]).into_owned());
        }
        let text = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        let value = mantissa * scale;
        self.lits.push(Literal {
            text,
            mantissa,
            value,
            claim,
        });
        Ok(value)
    }
}

/// The numbers a line of experiments/CLAIMS.md quotes, each as (mantissa,
/// value): `7,971,773` is 7971773; `5.6M` and `6.6 GB` carry their
/// multiplier; "a couple of hundred" is 200.
pub fn quoted_numbers(line: &str) -> Vec<(f64, f64)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric());
        if !starts {
            i += 1;
            continue;
        }
        let mut digits = String::new();
        while i < b.len() {
            let c = b[i];
            let thousands =
                c == b',' && b.len() > i + 3 && b[i + 1..i + 4].iter().all(u8::is_ascii_digit);
            if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
                digits.push(char::from(c));
            } else if !thousands {
                break;
            }
            i += 1;
        }
        let Ok(m) = digits.parse::<f64>() else {
            continue;
        };
        let mut j = i;
        if b.get(j) == Some(&b' ') {
            j += 1;
        }
        let scale = match (b.get(j), b.get(j + 1)) {
            (Some(b'k' | b'K'), n) if n.is_none_or(|c| !c.is_ascii_lowercase()) => 1e3,
            (Some(b'M'), n) if n.is_none_or(|c| !c.is_ascii_lowercase()) => 1e6,
            (Some(b'G'), n) if n.is_none_or(|c| !c.is_ascii_lowercase()) => 1e9,
            _ => 1.0,
        };
        out.push((m, m * scale));
    }
    if line.contains("a couple of hundred") {
        out.push((200.0, 200.0));
    }
    out
}

/// Whether a literal is one of `quoted` (by value, or by its mantissa
/// when the claim writes the multiplier once for a range: "10-15k").
pub fn is_quoted(l: &Literal, quoted: &[(f64, f64)]) -> bool {
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
    quoted
        .iter()
        .any(|(m, v)| same(l.value, *v) || same(l.mantissa, *m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expression_is_evaluated_with_its_literals() {
        let (v, l) = eval("7971773 / 5.6M").unwrap();
        assert!((v - 1.42353).abs() < 1e-4, "{v}");
        assert_eq!(l.len(), 2);
        assert_eq!((l[1].mantissa, l[1].value), (5.6, 5.6e6));
        let (v, _) = eval("mid(4, 16)").unwrap();
        assert_eq!(v, 8.0);
        let (v, l) = eval("483 / 50435@002-a").unwrap();
        assert!((v - 483.0 / 50435.0).abs() < 1e-12);
        assert_eq!(l[1].claim.as_deref(), Some("002-a"));
        assert_eq!(eval("(1 + 2) * 3").unwrap().0, 9.0);
        assert_eq!(
            eval("4 -").unwrap_err().to_string(),
            "\"4 -\": a number is missing at the end"
        );
        assert_eq!(
            eval("x").unwrap_err().to_string(),
            "\"x\": unexpected 'x' at 1"
        );
        assert_eq!(
            eval("1 2").unwrap_err().to_string(),
            "\"1 2\": unexpected '2' at 3"
        );
        assert_eq!(
            eval("(1").unwrap_err().to_string(),
            "\"(1\": expected ')' at 3"
        );
        let e = eval("1 - 1").unwrap_err();
        assert_eq!(e.to_string(), "\"1 - 1\" is 0, not a number above 0");
        let e = eval("1..2").unwrap_err();
        assert_eq!(e.to_string(), "\"1..2\": \"1..2\" is not a number");
        let why = std::error::Error::source(&e).expect("the syntax error");
        assert_eq!(why.to_string(), "\"1..2\" is not a number");
        assert!(eval("2 3")
            .unwrap_err()
            .to_string()
            .contains("unexpected '3'"));
    }

    #[test]
    fn a_claims_line_quotes_its_numbers_with_their_multipliers() {
        let q = quoted_numbers(
            "| 000-a | x | ~8M extents (7,971,773) after ~5.6M files: ~1.4 per file; 6.6 GB, 10-15k, a couple of hundred |",
        );
        for want in [
            (8.0, 8e6),
            (7_971_773.0, 7_971_773.0),
            (5.6, 5.6e6),
            (1.4, 1.4),
            (6.6, 6.6e9),
            (10.0, 10.0),
            (15.0, 15e3),
            (200.0, 200.0),
        ] {
            assert!(q.contains(&want), "{want:?} not in {q:?}");
        }
        // "000" of the id is a number too; "KiB" is not a multiplier word.
        assert!(quoted_numbers("4-16 KiB").contains(&(4.0, 4.0)));
        let lit = |s: &str| eval(s).unwrap().1.remove(0);
        assert!(is_quoted(&lit("10k"), &q));
        assert!(is_quoted(&lit("6.6G"), &q));
        assert!(!is_quoted(&lit("1.42"), &q));
    }
}

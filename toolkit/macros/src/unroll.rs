//! `unroll!`: a `for` loop over a constant range, written out once per iteration.
//!
//! `unroll!(for i in 0..4 { body })` becomes
//! `{ { let i = 0; body } { let i = 1; body } { let i = 2; body } { let i = 3; body } }`:
//! the loop variable is a constant in each copy, so array indices fold and the copies
//! schedule together, as CUDA C's `#pragma unroll` gives. The bounds are integer literals
//! (a proc macro sees tokens, not the values of constants), `a..b` or `a..=b`, optionally
//! negative, decimal or hexadecimal, with an optional suffix (`0u32..8`) that types the
//! variable; without one its type is inferred as in a `for` loop. The variable may be `_`.
//! An unlabeled `break` or `continue` in the body (outside a loop of its own) is rejected: it
//! would leave or restart a loop around the macro.

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

use crate::Failure;

/// The most copies `unroll!` writes out.
const MAX_ITERATIONS: i128 = 1024;

/// Expands `for i in A..B { body }` (integer literals) into one block per iteration.
pub(crate) fn expand(input: TokenStream) -> Result<TokenStream, Failure> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let usage = "unroll!: expected `for <name> in <integer literal>..<integer literal> { ... }` \
                 (or `..=`)";
    let mut at = 0;
    let next = |at: &mut usize| {
        let token = tokens.get(*at).cloned();
        *at += 1;
        token
    };
    match next(&mut at) {
        Some(TokenTree::Ident(i)) if i.to_string() == "for" => {}
        other => return Err((span_of(other.as_ref()), usage.into())),
    }
    let variable = match next(&mut at) {
        // `_` is an identifier to a proc macro.
        Some(TokenTree::Ident(i)) if i.to_string() != "in" => TokenTree::Ident(i),
        other => return Err((span_of(other.as_ref()), format!("{usage}: a name or `_` after `for`"))),
    };
    match next(&mut at) {
        Some(TokenTree::Ident(i)) if i.to_string() == "in" => {}
        other => return Err((span_of(other.as_ref()), format!("{usage}: `in` after the name"))),
    }
    let (start, start_suffix) = bound(&tokens, &mut at, usage)?;
    let inclusive = range_operator(&tokens, &mut at, usage)?;
    let (end, end_suffix) = bound(&tokens, &mut at, usage)?;
    let body = match next(&mut at) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => g,
        other => return Err((span_of(other.as_ref()), format!("{usage}: the loop's body in braces"))),
    };
    if let Some(extra) = tokens.get(at) {
        return Err((extra.span(), "unroll!: nothing may follow the loop's body".into()));
    }
    let suffix = match (start_suffix, end_suffix) {
        (Some(a), Some(b)) if a != b => {
            return Err((
                Span::call_site(),
                format!("unroll!: the bounds have different types, {a} and {b}"),
            ));
        }
        (a, b) => a.or(b),
    };
    let end = if inclusive { end + 1 } else { end };
    if end - start > MAX_ITERATIONS {
        return Err((
            Span::call_site(),
            format!("unroll!: {} iterations; at most {MAX_ITERATIONS} are written out", end - start),
        ));
    }
    reject_break_continue(body.stream())?;

    let mut out = TokenStream::new();
    for value in start..end {
        // `let <variable> = <value><suffix>;` then the body's tokens, in a block of its own.
        let mut copy: Vec<TokenTree> =
            vec![TokenTree::Ident(Ident::new("let", body.span())), variable.clone()];
        copy.push(TokenTree::Punct(Punct::new('=', Spacing::Alone)));
        copy.extend(literal(value, suffix.as_deref()));
        copy.push(TokenTree::Punct(Punct::new(';', Spacing::Alone)));
        // A named variable that one copy's body ignores should not warn in every copy.
        if variable.to_string() != "_" {
            copy.extend(quote_allow_unused(&variable));
        }
        copy.extend(body.stream());
        out.extend([TokenTree::Group(Group::new(Delimiter::Brace, copy.into_iter().collect()))]);
    }
    Ok([TokenTree::Group(Group::new(Delimiter::Brace, out))].into_iter().collect())
}

/// `let _ = &<variable>;`: uses the binding once, so a body that ignores it does not warn.
fn quote_allow_unused(variable: &TokenTree) -> Vec<TokenTree> {
    vec![
        TokenTree::Ident(Ident::new("let", Span::call_site())),
        TokenTree::Ident(Ident::new("_", Span::call_site())),
        TokenTree::Punct(Punct::new('=', Spacing::Alone)),
        TokenTree::Punct(Punct::new('&', Spacing::Alone)),
        variable.clone(),
        TokenTree::Punct(Punct::new(';', Spacing::Alone)),
    ]
}

/// `value` as literal tokens (a `-` and the magnitude when negative), with the suffix if any.
fn literal(value: i128, suffix: Option<&str>) -> Vec<TokenTree> {
    let magnitude = value.unsigned_abs();
    let text = match suffix {
        Some(suffix) => format!("{magnitude}{suffix}"),
        None => magnitude.to_string(),
    };
    let literal: Literal = text.parse().expect("an integer literal");
    let mut tokens = Vec::new();
    if value < 0 {
        tokens.push(TokenTree::Punct(Punct::new('-', Spacing::Alone)));
    }
    tokens.push(TokenTree::Literal(literal));
    tokens
}

/// One bound: an optional `-` and an integer literal; its value and its suffix (`u32`, ...).
fn bound(tokens: &[TokenTree], at: &mut usize, usage: &str) -> Result<(i128, Option<String>), Failure> {
    let negative = matches!(tokens.get(*at), Some(TokenTree::Punct(p)) if p.as_char() == '-');
    if negative {
        *at += 1;
    }
    let token = tokens.get(*at);
    *at += 1;
    let Some(TokenTree::Literal(literal)) = token else {
        return Err((
            span_of(token),
            format!("{usage}: the bounds must be integer literals (a macro cannot see a constant's value)"),
        ));
    };
    let (value, suffix) = parse_integer(&literal.to_string())
        .ok_or_else(|| (literal.span(), format!("unroll!: {literal} is not an integer literal")))?;
    Ok((if negative { -value } else { value }, suffix))
}

/// An integer literal's value and suffix: `12`, `0x1F`, `1_000u32`.
fn parse_integer(text: &str) -> Option<(i128, Option<String>)> {
    let (radix, digits) = match text.get(..2) {
        Some("0x") => (16, &text[2..]),
        Some("0o") => (8, &text[2..]),
        Some("0b") => (2, &text[2..]),
        _ => (10, text),
    };
    let suffixes = ["usize", "isize", "u128", "i128", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8"];
    let (digits, suffix) = match suffixes.iter().find(|s| digits.ends_with(*s)) {
        Some(suffix) => (&digits[..digits.len() - suffix.len()], Some(suffix.to_string())),
        None => (digits, None),
    };
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() {
        return None;
    }
    i128::from_str_radix(&digits, radix).ok().map(|value| (value, suffix))
}

/// `..` (false) or `..=` (true).
fn range_operator(tokens: &[TokenTree], at: &mut usize, usage: &str) -> Result<bool, Failure> {
    let dot = |token: Option<&TokenTree>| matches!(token, Some(TokenTree::Punct(p)) if p.as_char() == '.');
    if !(dot(tokens.get(*at)) && dot(tokens.get(*at + 1))) {
        return Err((span_of(tokens.get(*at)), format!("{usage}: a range `a..b` or `a..=b`")));
    }
    *at += 2;
    let inclusive = matches!(tokens.get(*at), Some(TokenTree::Punct(p)) if p.as_char() == '=');
    if inclusive {
        *at += 1;
    }
    Ok(inclusive)
}

/// Fails on an unlabeled `break` or `continue` outside a loop of the body's own (in a closure
/// they are errors anyway).
fn reject_break_continue(body: TokenStream) -> Result<(), Failure> {
    let tokens: Vec<TokenTree> = body.into_iter().collect();
    let mut skip_next_brace = false;
    for (index, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Ident(ident) => {
                let word = ident.to_string();
                match word.as_str() {
                    // A loop of the body's own: its `break`s are its own.
                    "loop" | "while" | "for" => skip_next_brace = true,
                    "break" | "continue" => {
                        let labeled =
                            matches!(tokens.get(index + 1), Some(TokenTree::Punct(p)) if p.as_char() == '\'');
                        if !labeled {
                            return Err((
                                ident.span(),
                                format!(
                                    "unroll!: `{word}` is not supported in an unrolled loop (each iteration is a \
                                     block of its own); use an `if` around the rest of the body"
                                ),
                            ));
                        }
                    }
                    _ => {}
                }
            }
            TokenTree::Group(group) if group.delimiter() == Delimiter::Brace && skip_next_brace => {
                skip_next_brace = false;
            }
            TokenTree::Group(group) => reject_break_continue(group.stream())?,
            _ => {}
        }
    }
    Ok(())
}

fn span_of(token: Option<&TokenTree>) -> Span {
    token.map_or_else(Span::call_site, TokenTree::span)
}

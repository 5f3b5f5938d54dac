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
//!
//! `unroll!(N, for i in start..end { body })` (`N` an integer literal, the bounds any
//! expressions, evaluated once, in order) is CUDA C's `#pragma unroll N`: a loop whose
//! iteration runs the body `N` times (`let i = base;`, `let i = base + 1;`, ...) while at
//! least `N` iterations are left, then the rest:
//! ```text
//! { let mut base = (start); let end = (end);
//!   while base < end && end - base >= N { { let i = base; body } ... { let i = base + (N - 1); body } base += N; }
//!   if base < end { { let i = base; body } if end - base > 1 { ... if end - base > N - 2 { ... } } } }
//! ```
//! The remainder, fewer than `N` iterations, is written out too, each copy under its own test
//! (a loop there LLVM would unroll again, not knowing that it runs fewer than `N` times): the
//! body appears 2N − 1 times, so `N` is at most 64. `base` and `end` are hygienic (the body
//! cannot see them). The range is half-open; its type is the bounds' integer type.

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

use crate::Failure;

/// The most copies `unroll!` writes out.
const MAX_ITERATIONS: i128 = 1024;

/// The largest factor of `unroll!(N, ...)`: it writes the body out 2N − 1 times.
const MAX_FACTOR: i128 = 64;

/// Expands `for i in A..B { body }` (integer literals) into one block per iteration, or
/// `N, for i in start..end { body }` into a loop unrolled by `N` and its remainder loop.
pub(crate) fn expand(input: TokenStream) -> Result<TokenStream, Failure> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    if matches!(tokens.get(1), Some(TokenTree::Punct(p)) if p.as_char() == ',') {
        return expand_by(&tokens);
    }
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

/// `N, for <name> in <start>..<end> { body }`: the loop unrolled by `N` (see the module
/// documentation).
fn expand_by(tokens: &[TokenTree]) -> Result<TokenStream, Failure> {
    let usage = "unroll!: expected `N, for <name> in <start>..<end> { ... }` (N an integer literal)";
    let factor = match &tokens[0] {
        TokenTree::Literal(literal) => match parse_integer(&literal.to_string()) {
            Some((value, _)) if (1..=MAX_FACTOR).contains(&value) => value,
            _ => {
                return Err((
                    literal.span(),
                    format!("unroll!: the factor must be an integer literal from 1 to {MAX_FACTOR}"),
                ));
            }
        },
        other => return Err((other.span(), usage.into())),
    };
    match tokens.get(2) {
        Some(TokenTree::Ident(i)) if i.to_string() == "for" => {}
        other => return Err((span_of(other), format!("{usage}: `for` after the factor"))),
    }
    let variable = match tokens.get(3) {
        Some(TokenTree::Ident(i)) if i.to_string() != "in" => TokenTree::Ident(i.clone()),
        other => return Err((span_of(other), format!("{usage}: a name or `_` after `for`"))),
    };
    match tokens.get(4) {
        Some(TokenTree::Ident(i)) if i.to_string() == "in" => {}
        other => return Err((span_of(other), format!("{usage}: `in` after the name"))),
    }
    let body = match tokens.last() {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace && tokens.len() > 5 => g.clone(),
        other => return Err((span_of(other), format!("{usage}: the loop's body in braces, last"))),
    };
    // The range: the tokens between `in` and the body, split at the first `..` outside groups.
    let range = &tokens[5..tokens.len() - 1];
    let dots = range.windows(2).position(|pair| {
        matches!(pair, [TokenTree::Punct(a), TokenTree::Punct(b)]
            if a.as_char() == '.' && b.as_char() == '.' && a.spacing() == Spacing::Joint)
    });
    let Some(dots) = dots else {
        return Err((span_of(range.first()), format!("{usage}: a range `start..end`")));
    };
    let (start, end) = (&range[..dots], &range[dots + 2..]);
    if matches!(end.first(), Some(TokenTree::Punct(p)) if p.as_char() == '=') {
        return Err((
            end[0].span(),
            "unroll!: with a factor the range is half-open, `start..end` (write `start..end + 1`)".into(),
        ));
    }
    if start.is_empty() || end.is_empty() {
        return Err((span_of(range.first()), format!("{usage}: both bounds of the range")));
    }
    reject_break_continue(body.stream())?;

    // Hygienic names: the body's tokens (call-site spans) cannot name them.
    let base = || TokenTree::Ident(Ident::new("base", Span::mixed_site()));
    let limit = || TokenTree::Ident(Ident::new("end", Span::mixed_site()));
    let group = |delimiter, tokens: Vec<TokenTree>| {
        TokenTree::Group(Group::new(delimiter, tokens.into_iter().collect()))
    };
    let punct = |c| TokenTree::Punct(Punct::new(c, Spacing::Alone));
    let word = |w: &str| TokenTree::Ident(Ident::new(w, Span::mixed_site()));
    let number = |value: i128| TokenTree::Literal(Literal::i128_unsuffixed(value));
    // `{ let <variable> = base + k; let _ = &<variable>; body }`.
    let copy = |k: i128| {
        let mut copy = vec![TokenTree::Ident(Ident::new("let", body.span())), variable.clone(), punct('=')];
        copy.push(base());
        if k > 0 {
            copy.extend([punct('+'), number(k)]);
        }
        copy.push(punct(';'));
        if variable.to_string() != "_" {
            copy.extend(quote_allow_unused(&variable));
        }
        copy.extend(body.stream());
        group(Delimiter::Brace, copy)
    };
    // `base += k;`
    let advance = |k: i128| {
        vec![base(), TokenTree::Punct(Punct::new('+', Spacing::Joint)), punct('='), number(k), punct(';')]
    };
    // `base < end`
    let left = || vec![base(), punct('<'), limit()];

    let mut out: Vec<TokenTree> = vec![word("let"), word("mut"), base(), punct('=')];
    out.push(group(Delimiter::Parenthesis, start.to_vec()));
    out.push(punct(';'));
    out.extend([word("let"), limit(), punct('=')]);
    out.push(group(Delimiter::Parenthesis, end.to_vec()));
    out.push(punct(';'));
    // while base < end && end - base >= N { copies; base += N; }
    let mut condition = left();
    condition.extend([TokenTree::Punct(Punct::new('&', Spacing::Joint)), punct('&')]);
    condition.extend([
        limit(),
        punct('-'),
        base(),
        TokenTree::Punct(Punct::new('>', Spacing::Joint)),
        punct('='),
    ]);
    condition.push(number(factor));
    let mut main: Vec<TokenTree> = (0..factor).map(copy).collect();
    main.extend(advance(factor));
    out.push(word("while"));
    out.extend(condition);
    out.push(group(Delimiter::Brace, main));
    // The remainder, at most N − 1 iterations, written out too (a loop would be unrolled
    // again by LLVM, which cannot see that it runs fewer than N times):
    // if base < end { copy 0; if end - base > 1 { copy 1; ... } } (no overflow: inside
    // `base < end`, and `base + k < end` where copy k runs).
    let mut rest: Vec<TokenTree> = Vec::new();
    for k in (0..factor - 1).rev() {
        let mut then = vec![copy(k)];
        then.extend(rest);
        let mut guard = vec![word("if")];
        if k > 0 {
            guard.extend([limit(), punct('-'), base(), punct('>'), number(k)]);
        } else {
            guard.extend(left());
        }
        guard.push(group(Delimiter::Brace, then));
        rest = guard;
    }
    out.extend(rest);
    Ok([group(Delimiter::Brace, out)].into_iter().collect())
}

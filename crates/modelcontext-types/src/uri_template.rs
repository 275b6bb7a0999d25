//! RFC 6570 URI templates, as MCP resource templates use them.
//!
//! A server registers a resource template such as `books://{title}` once
//! ([`UriTemplate::parse`]) and, for every `resources/read`, asks whether the requested URI
//! [matches](UriTemplate::matches) it and with which values. A client fills a template in with
//! [`UriTemplate::expand`]. Both sides use this one implementation, and so does the
//! `#[resource]` macro at compile time, so a template it accepts is one the server accepts.
//! `modelcontext` re-exports it as `modelcontext::types::uri_template`.
//!
//! Parsing and expansion follow RFC 6570 level 4. Matching is the inverse, which the RFC leaves
//! open (§1.4 only notes that some templates can be read in reverse), so its rules are ours; they
//! are spelled out on [`UriTemplate::matches`].

use std::fmt;
use std::ops::Range;

/// A URI template, parsed and validated once, when a resource template is registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

/// The value of a template variable (RFC 6570 §2.3).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Value {
    /// A string, the common case.
    String(String),
    /// A list of strings. An empty list counts as undefined.
    List(Vec<String>),
    /// An associative array, in the order its pairs are expanded. Empty counts as undefined.
    Map(Vec<(String, String)>),
}

/// Why a template was refused, could not be expanded, or does not fit its handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    message: String,
    offset: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// Text outside braces, already checked against RFC 6570 §2.1. Never empty.
    Literal(String),
    Expression(Expression),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Expression {
    op: Operator,
    /// Never empty: the grammar requires at least one varspec.
    vars: Vec<VarSpec>,
    /// Where the expression, braces included, sits in the template.
    span: Range<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct VarSpec {
    name: String,
    modifier: Modifier,
    /// Byte offset of the name in the template, for error messages.
    offset: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Modifier {
    None,
    /// `:N`, keep the first N characters (not bytes) of a string.
    Prefix(usize),
    /// `*`, one item per list element or map pair.
    Explode,
}

/// The expression operators of RFC 6570 §2.2; the tables below are its Appendix A.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryCont,
}

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

impl UriTemplate {
    /// Parses and validates `template` against the full RFC 6570 (level 4) grammar.
    ///
    /// # Errors
    ///
    /// Unclosed or nested braces, empty expressions, the reserved operators `=` `,` `!` `@`
    /// `|`, malformed variable names or prefixes, and literal characters the RFC does not allow
    /// (spaces, `"`, `<`, `>`, `\`, `^`, `` ` ``, `|`, `}`, and `%` outside a `%XX` escape).
    /// The error gives the byte offset of the problem.
    pub fn parse(template: &str) -> Result<UriTemplate, TemplateError> {
        let mut parts = Vec::new();
        let mut pos = 0;
        while let Some(rest) = template.get(pos..).filter(|rest| !rest.is_empty()) {
            let len = if rest.starts_with('{') {
                let len = expression_len(rest, pos)?;
                parts.push(Part::Expression(parse_expression(template, pos..pos + len)?));
                len
            } else {
                let literal = &rest[..rest.find('{').unwrap_or(rest.len())];
                check_literal(literal, pos)?;
                parts.push(Part::Literal(literal.to_owned()));
                literal.len()
            };
            pos += len;
        }
        Ok(UriTemplate { source: template.to_owned(), parts })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variable names in order of first appearance, each once.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.varspecs()
            .enumerate()
            .filter(|&(i, spec)| !self.varspecs().take(i).any(|earlier| earlier.name == spec.name))
            .map(|(_, spec)| spec.name.as_str())
    }

    /// Whether the template has at least one expression, that is, is more than a fixed URI.
    pub fn is_template(&self) -> bool {
        self.parts.iter().any(|part| matches!(part, Part::Expression(_)))
    }

    /// Expands the template (RFC 6570 §3), looking variables up through `vars`.
    ///
    /// `None` means undefined, and so do empty lists and maps: undefined variables vanish from
    /// the result together with their operator's prefix. An expression that cannot be expanded
    /// (a prefix modifier on a list or map, §2.4.1) is copied verbatim, as §3 recommends;
    /// use [`try_expand`](Self::try_expand) to get an error instead.
    pub fn expand(&self, vars: &dyn Fn(&str) -> Option<Value>) -> String {
        let verbatim = |part: &Part| match part {
            Part::Expression(expr) => self.source[expr.span.clone()].to_owned(),
            Part::Literal(text) => text.clone(),
        };
        self.parts
            .iter()
            .map(|part| expand_part(part, vars).unwrap_or_else(|_| verbatim(part)))
            .collect()
    }

    /// Like [`expand`](Self::expand), but fails on the first expression that cannot be expanded.
    ///
    /// # Errors
    ///
    /// A prefix modifier (`{var:3}`) whose variable is a list or map (RFC 6570 §2.4.1).
    pub fn try_expand(
        &self,
        vars: &dyn Fn(&str) -> Option<Value>,
    ) -> Result<String, TemplateError> {
        self.parts.iter().map(|part| expand_part(part, vars)).collect()
    }

    /// Whether `uri` matches the template, and with which percent-decoded values.
    ///
    /// Returns `(name, value)` pairs in template order; variables that are absent from the URI
    /// (an optional `{?q}` or `{/path*}`) are absent from the result. Rejected values look
    /// exactly like no match.
    ///
    /// The rules, since RFC 6570 does not define matching:
    /// - The URI is read once, left to right, with no backtracking. An expression's text ends
    ///   at the first occurrence of what follows it in the template (the next literal, or the
    ///   next expression's prefix such as `/` or `?`), or at its operator's delimiters,
    ///   whichever comes first: `{var}`, `{.var}` and `{;var}` stop at `/`, `?` and `#`;
    ///   `{/var}` takes one segment and `{/var*}` all of them up to `?` or `#`;
    ///   `{?q}` and `{&q}` stop at `#`; `{+var}` and `{#var}` stop only where the template does.
    ///   So `{a}-{b}` reads `x-y-z` as `a = x`, `b = y-z`.
    /// - Literals match byte for byte, as written in the template.
    /// - `{var}` and `{+var}` need a non-empty value: `books://` does not match `books://{title}`.
    /// - `{x,y}` splits on the operator's separator, in order; the last variable keeps the rest.
    /// - `{?a,b}{&c}` is one query string: parameters may come in any order, missing ones are
    ///   absent and unknown ones ignored. A repeated parameter (`?tag=a&tag=b`) gives `a,b`.
    ///   `{;a}` works the same way with `;`.
    /// - Values are percent-decoded as UTF-8 (`+` stays `+`); a bad escape or invalid UTF-8 is
    ///   no match. Prefix modifiers (`{var:3}`) are ignored.
    /// - Path safety: handlers often turn values into file paths, so a value with a NUL byte,
    ///   a `..` component (split on `/` and `\`), or an absolute path (`/x`, `\x`, `C:\x`, `C:/x`)
    ///   is refused. Values of `{var}`, `{.var}`, `{/var}` and `{;var}` are single segments and
    ///   may not contain `/` or `\` at all, even percent-encoded: otherwise `books://{title}`
    ///   would serve `books://..%2F..%2Fetc%2Fpasswd`. [`matches_unchecked`](Self::matches_unchecked)
    ///   turns these checks off.
    ///
    /// Time is linear in the URI's length for a given template, O(n * t) for a URI of n bytes
    /// and a template of t bytes: without backtracking, each URI byte is scanned by one
    /// expression, compared at most with the literal that follows it, and, in a query, checked
    /// once per parameter name.
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        self.match_uri(uri, true)
    }

    /// [`matches`](Self::matches) without the path-safety checks, for handlers that never touch
    /// the file system with these values.
    pub fn matches_unchecked(&self, uri: &str) -> Option<Vec<(String, String)>> {
        self.match_uri(uri, false)
    }

    /// Checks that the template's variables are exactly a handler's parameter names, so a
    /// mismatch is reported at registration rather than as a missing argument on every read.
    ///
    /// # Errors
    ///
    /// When the two sets differ, naming both and the names only one side has.
    pub fn check_variables(&self, expected: &[&str]) -> Result<(), TemplateError> {
        let ours: Vec<&str> = self.variables().collect();
        let unused: Vec<&str> = ours.iter().copied().filter(|v| !expected.contains(v)).collect();
        let missing: Vec<&str> = expected.iter().copied().filter(|p| !ours.contains(p)).collect();
        if unused.is_empty() && missing.is_empty() {
            return Ok(());
        }
        Err(TemplateError::new(format!(
            "template variables {{{}}} do not match handler parameters {{{}}} \
             (not a parameter: {{{}}}; not in the template: {{{}}})",
            ours.join(", "),
            expected.join(", "),
            unused.join(", "),
            missing.join(", "),
        )))
    }

    fn varspecs(&self) -> impl Iterator<Item = &VarSpec> {
        self.parts.iter().flat_map(|part| match part {
            Part::Expression(expr) => expr.vars.as_slice(),
            Part::Literal(_) => &[],
        })
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl TemplateError {
    /// The byte offset in the template the error points at, if it is about one spot.
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    fn new(message: String) -> TemplateError {
        TemplateError { message, offset: None }
    }

    fn at(offset: usize, message: impl Into<String>) -> TemplateError {
        TemplateError { message: message.into(), offset: Some(offset) }
    }
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "{} at byte {offset}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for TemplateError {}

impl From<&str> for Value {
    fn from(value: &str) -> Value {
        Value::String(value.to_owned())
    }
}

impl From<String> for Value {
    fn from(value: String) -> Value {
        Value::String(value)
    }
}

impl Value {
    /// RFC 6570 §2.3: empty lists and maps are undefined, but the empty string is defined.
    fn is_undefined(&self) -> bool {
        match self {
            Value::String(_) => false,
            Value::List(items) => items.is_empty(),
            Value::Map(pairs) => pairs.is_empty(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Operators (RFC 6570 Appendix A)
// ---------------------------------------------------------------------------------------------

impl Operator {
    fn from_char(c: char) -> Option<Operator> {
        Some(match c {
            '+' => Operator::Reserved,
            '#' => Operator::Fragment,
            '.' => Operator::Label,
            '/' => Operator::Path,
            ';' => Operator::PathParam,
            '?' => Operator::Query,
            '&' => Operator::QueryCont,
            _ => return None,
        })
    }

    /// What the expansion starts with, when at least one variable is defined.
    fn first(self) -> &'static str {
        match self {
            Operator::Simple | Operator::Reserved => "",
            Operator::Fragment => "#",
            Operator::Label => ".",
            Operator::Path => "/",
            Operator::PathParam => ";",
            Operator::Query => "?",
            Operator::QueryCont => "&",
        }
    }

    fn sep(self) -> u8 {
        match self {
            Operator::Simple | Operator::Reserved | Operator::Fragment => b',',
            Operator::Label => b'.',
            Operator::Path => b'/',
            Operator::PathParam => b';',
            Operator::Query | Operator::QueryCont => b'&',
        }
    }

    /// Whether values come as `name=value`.
    fn named(self) -> bool {
        matches!(self, Operator::PathParam | Operator::Query | Operator::QueryCont)
    }

    /// What follows the name of an empty value: `;x` but `?x=`.
    fn ifemp(self) -> &'static str {
        match self {
            Operator::Query | Operator::QueryCont => "=",
            _ => "",
        }
    }

    /// Whether reserved characters and `%XX` triplets pass through unencoded (U+R).
    fn allow_reserved(self) -> bool {
        matches!(self, Operator::Reserved | Operator::Fragment)
    }

    /// Bytes that end this operator's values when matching (see [`UriTemplate::matches`]).
    fn ends_value(self, byte: u8) -> bool {
        match self {
            Operator::Simple | Operator::Label | Operator::PathParam => b"/?#".contains(&byte),
            Operator::Path => b"?#".contains(&byte),
            Operator::Query | Operator::QueryCont => byte == b'#',
            Operator::Reserved | Operator::Fragment => false,
        }
    }

    /// Whether a matched value may contain `/`, because the operator exists to carry paths.
    fn spans_segments(self, spec: &VarSpec) -> bool {
        match self {
            Operator::Reserved | Operator::Fragment | Operator::Query | Operator::QueryCont => true,
            Operator::Path => spec.modifier == Modifier::Explode,
            Operator::Simple | Operator::Label | Operator::PathParam => false,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing (RFC 6570 §2)
// ---------------------------------------------------------------------------------------------

/// Length, braces included, of the expression at the start of `rest`, which starts with `{`.
fn expression_len(rest: &str, offset: usize) -> Result<usize, TemplateError> {
    let body = &rest[1..];
    match body.find(['{', '}']) {
        Some(i) if body[i..].starts_with('}') => Ok(i + 2),
        Some(i) => Err(TemplateError::at(
            offset + 1 + i,
            "`{` inside an expression (expressions do not nest)",
        )),
        None => Err(TemplateError::at(offset, "unclosed expression: `{` has no matching `}`")),
    }
}

fn parse_expression(template: &str, span: Range<usize>) -> Result<Expression, TemplateError> {
    let body = &template[span.start + 1..span.end - 1];
    let (op, list) = parse_operator(body, span.start)?;
    let mut offset = span.end - 1 - list.len();
    let mut vars = Vec::new();
    for text in list.split(',') {
        vars.push(parse_varspec(text, offset)?);
        offset += text.len() + 1;
    }
    Ok(Expression { op, vars, span })
}

/// Splits the operator off an expression's body; `open` is the offset of its `{`.
fn parse_operator(body: &str, open: usize) -> Result<(Operator, &str), TemplateError> {
    let Some(c) = body.chars().next() else {
        return Err(TemplateError::at(open, "empty expression `{}`"));
    };
    if let Some(op) = Operator::from_char(c) {
        return Ok((op, &body[1..]));
    }
    if "=,!@|".contains(c) {
        let message = format!("operator `{c}` is reserved for future extensions (RFC 6570 §2.2)");
        return Err(TemplateError::at(open + 1, message));
    }
    Ok((Operator::Simple, body))
}

fn parse_varspec(text: &str, offset: usize) -> Result<VarSpec, TemplateError> {
    let (name, modifier) = text.split_at(varname_len(text, offset)?);
    let modifier = parse_modifier(modifier, offset + name.len())?;
    Ok(VarSpec { name: name.to_owned(), modifier, offset })
}

/// Length of the varname that starts `text`: varchars (`ALPHA / DIGIT / _ / %XX`) with single
/// dots between them (RFC 6570 §2.3).
fn varname_len(text: &str, offset: usize) -> Result<usize, TemplateError> {
    let bytes = text.as_bytes();
    let mut i = 0;
    // A name starts as if after a dot: the next thing must be a varchar.
    let mut after_dot = true;
    loop {
        match bytes.get(i) {
            Some(b'%') if is_pct_encoded(bytes, i) => i += 3,
            Some(b) if b.is_ascii_alphanumeric() || *b == b'_' => i += 1,
            Some(b'.') if !after_dot => {
                i += 1;
                after_dot = true;
                continue;
            }
            _ if after_dot => return Err(varname_error(text, i, offset)),
            _ => return Ok(i),
        }
        after_dot = false;
    }
}

/// Explains why `text[i..]` cannot continue a variable name that needs a varchar next.
fn varname_error(text: &str, i: usize, offset: usize) -> TemplateError {
    let message = match text.get(i..).and_then(|rest| rest.chars().next()) {
        None if i == 0 => "empty variable name".to_owned(),
        None => "a variable name cannot end with `.`".to_owned(),
        Some('.') => "a variable name cannot contain `..` or start with `.`".to_owned(),
        Some('%') => "`%` in a variable name must start a `%XX` escape".to_owned(),
        Some(c) => format!("invalid character `{c}` in variable name"),
    };
    TemplateError::at(offset + i, message)
}

/// Parses what follows a varname: nothing, `*`, or `:N` with N in 1..=9999 (RFC 6570 §2.4).
fn parse_modifier(text: &str, offset: usize) -> Result<Modifier, TemplateError> {
    if text.is_empty() {
        return Ok(Modifier::None);
    }
    if text == "*" {
        return Ok(Modifier::Explode);
    }
    let Some(digits) = text.strip_prefix(':') else {
        return Err(varname_error(text, 0, offset));
    };
    if digits.ends_with('*') {
        return Err(TemplateError::at(
            offset,
            "a variable cannot have both a prefix and `*` (RFC 6570 §2.4)",
        ));
    }
    // The grammar is `%x31-39 0*3DIGIT`: no leading zero, at most four digits.
    let well_formed = (1..=4).contains(&digits.len())
        && !digits.starts_with('0')
        && digits.bytes().all(|b| b.is_ascii_digit());
    match digits.parse() {
        Ok(len) if well_formed => Ok(Modifier::Prefix(len)),
        _ => Err(TemplateError::at(
            offset + 1,
            format!("prefix length must be 1 to 9999, not `{digits}`"),
        )),
    }
}

/// Checks a literal against RFC 6570 §2.1; `offset` is where it starts in the template.
fn check_literal(text: &str, offset: usize) -> Result<(), TemplateError> {
    // The two hex digits of a `%XX` escape are literal characters themselves: no need to skip them.
    let bad = text
        .char_indices()
        .find(|&(i, c)| !(is_literal_char(c) || is_pct_encoded(text.as_bytes(), i)));
    match bad {
        Some((i, c)) => Err(TemplateError::at(offset + i, literal_error(c))),
        None => Ok(()),
    }
}

fn literal_error(c: char) -> String {
    match c {
        '}' => "`}` without a matching `{`".to_owned(),
        '%' => "`%` must start a `%XX` escape".to_owned(),
        _ => format!("character {c:?} is not allowed in a URI template; percent-encode it"),
    }
}

/// RFC 6570 §2.1 `literals`, except `%`, which is allowed only as part of `pct-encoded`.
///
/// One deviation: the RFC excludes `'`, but its own examples quote templates with it
/// (`'{count}'`, kept in the uritemplate-test suite), and `'` is a sub-delim (RFC 3986 §2.2),
/// so a URI may carry it unencoded.
fn is_literal_char(c: char) -> bool {
    match c {
        '\u{0}'..='\u{7f}' => {
            c.is_ascii_graphic()
                && !matches!(c, '"' | '%' | '<' | '>' | '\\' | '^' | '`' | '{' | '|' | '}')
        }
        _ => is_ucschar_or_iprivate(c),
    }
}

/// RFC 3987 `ucschar / iprivate`: the non-ASCII characters an IRI may contain.
fn is_ucschar_or_iprivate(c: char) -> bool {
    let c = u32::from(c);
    match c {
        0xA0..=0xD7FF | 0xE000..=0xFDCF | 0xFDF0..=0xFFEF => true,
        // Above the BMP, every plane except its last two code points, and plane 14 only from E1000.
        0x10000.. => (c & 0xFFFF) <= 0xFFFD && !(0xE0000..0xE1000).contains(&c),
        _ => false,
    }
}

fn is_pct_encoded(bytes: &[u8], i: usize) -> bool {
    matches!(bytes.get(i..i + 3), Some([b'%', hi, lo]) if hi.is_ascii_hexdigit() && lo.is_ascii_hexdigit())
}

// ---------------------------------------------------------------------------------------------
// Expansion (RFC 6570 §3 and Appendix A)
// ---------------------------------------------------------------------------------------------

fn expand_part(part: &Part, vars: &dyn Fn(&str) -> Option<Value>) -> Result<String, TemplateError> {
    match part {
        Part::Literal(text) => {
            // Literals are valid, so only non-ASCII characters get encoded (§3.1).
            let mut out = String::new();
            encode(text, true, &mut out);
            Ok(out)
        }
        Part::Expression(expr) => expand_expression(expr, vars),
    }
}

fn expand_expression(
    expr: &Expression,
    vars: &dyn Fn(&str) -> Option<Value>,
) -> Result<String, TemplateError> {
    let mut out = String::new();
    let mut first = true;
    for spec in &expr.vars {
        let Some(value) = vars(&spec.name).filter(|value| !value.is_undefined()) else {
            continue;
        };
        if first {
            out.push_str(expr.op.first());
        } else {
            out.push(char::from(expr.op.sep()));
        }
        first = false;
        expand_value(expr.op, spec, &value, &mut out)?;
    }
    Ok(out)
}

fn expand_value(
    op: Operator,
    spec: &VarSpec,
    value: &Value,
    out: &mut String,
) -> Result<(), TemplateError> {
    let name = spec.name.as_str();
    match (value, spec.modifier) {
        (Value::String(s), Modifier::Prefix(len)) => {
            expand_string(op, name, truncate_chars(s, len), out)
        }
        (Value::String(s), _) => expand_string(op, name, s, out),
        (_, Modifier::Prefix(len)) => {
            let message = format!(
                "prefix `:{len}` applies only to strings, but `{name}` is a list or map (RFC 6570 §2.4.1)"
            );
            return Err(TemplateError::at(spec.offset, message));
        }
        (Value::List(items), Modifier::Explode) => explode_list(op, name, items, out),
        (Value::Map(pairs), Modifier::Explode) => explode_map(op, pairs, out),
        (Value::List(items), Modifier::None) => {
            expand_joined(op, name, items.iter().map(String::as_str), out)
        }
        (Value::Map(pairs), Modifier::None) => {
            let flat = pairs.iter().flat_map(|(k, v)| [k.as_str(), v.as_str()]);
            expand_joined(op, name, flat, out);
        }
    }
    Ok(())
}

fn expand_string(op: Operator, name: &str, value: &str, out: &mut String) {
    if op.named() {
        push_named(op, name, value, out);
    } else {
        encode(value, op.allow_reserved(), out);
    }
}

/// `name=value`, or `name` plus `ifemp` when the value is empty (`;x` but `?x=`).
fn push_named(op: Operator, name: &str, value: &str, out: &mut String) {
    out.push_str(name);
    if value.is_empty() {
        out.push_str(op.ifemp());
    } else {
        out.push('=');
        encode(value, op.allow_reserved(), out);
    }
}

/// An unexploded list or map: one value, items joined by commas.
fn expand_joined<'v>(
    op: Operator,
    name: &str,
    items: impl Iterator<Item = &'v str>,
    out: &mut String,
) {
    if op.named() {
        out.push_str(name);
        out.push('=');
    }
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        encode(item, op.allow_reserved(), out);
    }
}

fn explode_list(op: Operator, name: &str, items: &[String], out: &mut String) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(char::from(op.sep()));
        }
        expand_string(op, name, item, out);
    }
}

fn explode_map(op: Operator, pairs: &[(String, String)], out: &mut String) {
    for (i, (key, value)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(char::from(op.sep()));
        }
        let mut name = String::new();
        encode(key, op.allow_reserved(), &mut name);
        if op.named() {
            push_named(op, &name, value, out);
        } else {
            // Unnamed operators still write `key=value` for exploded maps (Appendix A).
            out.push_str(&name);
            out.push('=');
            encode(value, op.allow_reserved(), out);
        }
    }
}

/// The first `len` characters of `s`: §2.4.1 counts characters, so multibyte ones stay whole.
fn truncate_chars(s: &str, len: usize) -> &str {
    s.char_indices().nth(len).map_or(s, |(end, _)| &s[..end])
}

/// Appends `s`, percent-encoding everything outside the unreserved set, or outside
/// unreserved + reserved + `%XX` triplets when `allow_reserved` (U and U+R in §1.5).
fn encode(s: &str, allow_reserved: bool, out: &mut String) {
    let bytes = s.as_bytes();
    for (i, c) in s.char_indices() {
        let keep =
            is_unreserved(c) || allow_reserved && (is_reserved(c) || is_pct_encoded(bytes, i));
        if keep {
            out.push(c);
        } else {
            let mut buf = [0; 4];
            c.encode_utf8(&mut buf).bytes().for_each(|b| push_pct(b, out));
        }
    }
}

fn push_pct(byte: u8, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('%');
    out.push(char::from(HEX[usize::from(byte >> 4)]));
    out.push(char::from(HEX[usize::from(byte & 0xF)]));
}

fn is_unreserved(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
}

fn is_reserved(c: char) -> bool {
    ":/?#[]@!$&'()*+,;=".contains(c)
}

// ---------------------------------------------------------------------------------------------
// Matching (our rules; see `UriTemplate::matches`)
// ---------------------------------------------------------------------------------------------

impl UriTemplate {
    fn match_uri(&self, uri: &str, checked: bool) -> Option<Vec<(String, String)>> {
        let mut matcher = Matcher { rest: uri.as_bytes(), checked, found: Vec::new() };
        let mut i = 0;
        while let Some(part) = self.parts.get(i) {
            i += 1;
            match part {
                Part::Literal(text) => matcher.rest = matcher.rest.strip_prefix(text.as_bytes())?,
                Part::Expression(expr) => {
                    let (specs, merged) = match_group(expr, self.parts.get(i..).unwrap_or(&[]));
                    i += merged;
                    matcher.expression(expr.op, &specs, self.parts.get(i))?;
                }
            }
        }
        matcher.rest.is_empty().then_some(matcher.found)
    }
}

/// The varspecs to match together with `expr`, and how many of the `following` parts they took:
/// `{?a}{&b}` writes one query string, so it is read as one, parameters in any order.
fn match_group<'t>(expr: &'t Expression, following: &'t [Part]) -> (Vec<&'t VarSpec>, usize) {
    let mut specs: Vec<&VarSpec> = expr.vars.iter().collect();
    let mut merged = 0;
    if expr.op == Operator::Query {
        for part in following {
            match part {
                Part::Expression(next) if next.op == Operator::QueryCont => {
                    specs.extend(&next.vars)
                }
                _ => break,
            }
            merged += 1;
        }
    }
    (specs, merged)
}

struct Matcher<'u> {
    /// The part of the URI not consumed yet.
    rest: &'u [u8],
    /// Whether path-safety checks are on.
    checked: bool,
    found: Vec<(String, String)>,
}

impl Matcher<'_> {
    /// Consumes one expression (or query group) given the part that follows it in the template.
    fn expression(&mut self, op: Operator, specs: &[&VarSpec], next: Option<&Part>) -> Option<()> {
        // Without a prefix, empty and absent look the same, and a handler must not run without
        // its variable; with one, the whole expression is optional.
        let optional = !op.first().is_empty();
        let until: &[u8] = match next {
            Some(Part::Literal(text)) if self.rest.starts_with(text.as_bytes()) => {
                // What follows the expression wins: `/files{/path*}/edit` matches `/files/edit`.
                return optional.then_some(());
            }
            Some(Part::Literal(text)) => text.as_bytes(),
            Some(Part::Expression(next)) => next.op.first().as_bytes(),
            None => b"",
        };
        let Some(text) = self.rest.strip_prefix(op.first().as_bytes()) else {
            return optional.then_some(());
        };
        let (body, rest) = text.split_at(value_len(op, specs, text, until));
        self.rest = rest;
        if op.named() { self.named(op, specs, body) } else { self.positional(op, specs, body) }
    }

    /// Values separated by the operator's separator, assigned in order (`{x,y}`, `{/a,b}`).
    fn positional(&mut self, op: Operator, specs: &[&VarSpec], body: &[u8]) -> Option<()> {
        if op.first().is_empty() && body.is_empty() {
            return None;
        }
        for (spec, raw) in specs.iter().zip(body.splitn(specs.len(), |&b| b == op.sep())) {
            self.accept(op, spec, percent_decode(raw)?)?;
        }
        Some(())
    }

    /// `name=value` pairs in any order (`{?a,b}`, `{;x}`); unknown names are ignored.
    fn named(&mut self, op: Operator, specs: &[&VarSpec], body: &[u8]) -> Option<()> {
        for spec in specs {
            let mut values =
                body.split(|&b| b == op.sep()).filter_map(|pair| param_value(pair, &spec.name));
            let Some(first) = values.next() else { continue };
            // A repeated parameter is an exploded list; give it the unexploded form, `a,b`.
            let mut raw = first.to_vec();
            for value in values {
                raw.push(b',');
                raw.extend_from_slice(value);
            }
            self.accept(op, spec, percent_decode(&raw)?)?;
        }
        Some(())
    }

    fn accept(&mut self, op: Operator, spec: &VarSpec, value: String) -> Option<()> {
        if self.checked && !is_safe_path(&value, op.spans_segments(spec)) {
            return None;
        }
        match self.found.iter().find(|(name, _)| *name == spec.name) {
            // A variable used twice (`{a}/{a}`) must have one value.
            Some((_, earlier)) => (*earlier == value).then_some(()),
            None => {
                self.found.push((spec.name.clone(), value));
                Some(())
            }
        }
    }
}

/// How many bytes of `text` one expression takes: up to the operator's delimiters or the first
/// occurrence of `until` (what follows in the template), whichever comes first. Never looks
/// back, which is what keeps matching linear: O(len(text) * len(until)).
fn value_len(op: Operator, specs: &[&VarSpec], text: &[u8], until: &[u8]) -> usize {
    // `{/a,b}` takes two segments, so its second inner `/` ends it; `{/a*}` takes them all.
    let explode = specs.iter().any(|spec| spec.modifier == Modifier::Explode);
    let mut slashes_left = if explode { usize::MAX } else { specs.len().saturating_sub(1) };
    let mut ends_at = |i: usize| {
        let byte = text[i];
        if op == Operator::Path && byte == b'/' {
            if slashes_left == 0 {
                return true;
            }
            slashes_left -= 1;
        }
        op.ends_value(byte) || (!until.is_empty() && text[i..].starts_with(until))
    };
    (0..text.len()).find(|&i| ends_at(i)).unwrap_or(text.len())
}

/// The value of `pair` if it is `name=value` or a bare `name` (`;x` means `x` is empty).
fn param_value<'p>(pair: &'p [u8], name: &str) -> Option<&'p [u8]> {
    match pair.strip_prefix(name.as_bytes())? {
        [] => Some(&[]),
        [b'=', value @ ..] => Some(value),
        _ => None,
    }
}

/// Decodes `%XX` escapes; `None` for a malformed escape or bytes that are not UTF-8.
fn percent_decode(raw: &[u8]) -> Option<String> {
    crate::percent::decode(raw).ok()
}

/// Whether a decoded value is safe to use as a path relative to some root. `spans_segments`
/// allows inner separators, for operators meant to carry paths (`{+path}`, `{/path*}`).
fn is_safe_path(value: &str, spans_segments: bool) -> bool {
    !value.contains('\0')
        && !is_absolute(value)
        && (spans_segments || !value.contains(['/', '\\']))
        && !value.split(['/', '\\']).any(|component| component == "..")
}

/// Unix roots, Windows roots and UNC paths (`\x`, `\\server`), and drive paths (`C:\x`, `C:/x`).
fn is_absolute(value: &str) -> bool {
    match value.as_bytes() {
        [b'/' | b'\\', ..] => true,
        [drive, b':', b'/' | b'\\', ..] => drive.is_ascii_alphabetic(),
        _ => false,
    }
}

#[cfg(test)]
mod tests;

//! HealthKit's unit strings (`HKUnit(from:)`) by their grammar, not by a list of pairs: SI
//! prefixes on base units, `/` (everything after it is the denominator), `·` or `*` between
//! factors, `^` exponents, parentheses, and a molar mass for moles (`mmol<180.15588>/L`). A unit
//! parses into a dimension and a factor to SI; a value converts between two units of the same
//! dimension. Temperatures (`degC`, `degF`, `K`) are affine and stand alone.
//!
//! The parent module (`units`) keeps the pairs that carry meaning beyond the unit (HealthKit's `%`
//! as a fraction, a BMI sent as `count`); this grammar answers every other spelling HealthKit can
//! write, so `mi/hr` is a speed without anyone listing it.

/// Exponents of the base dimensions: mass, length, time, current, amount of substance, and the
/// units HealthKit keeps apart (sound pressure level, hearing level, international units,
/// illuminance, plane angle, Apple's effort score).
type Dim = [i8; 11];
const M: usize = 0;
const L: usize = 1;
const T: usize = 2;
const I: usize = 3;
const N: usize = 4;
const SPL: usize = 5;
const HL: usize = 6;
const IU: usize = 7;
const LUX: usize = 8;
const ANGLE: usize = 9;
const EFFORT: usize = 10;

fn dim(parts: &[(usize, i8)]) -> Dim {
    let mut d = [0; 11];
    for (i, e) in parts {
        d[*i] = *e;
    }
    d
}

/// A parsed unit: its dimension and the factor that takes a value in it to SI.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Unit {
    pub dim: Dim,
    pub factor: f64,
}

impl Unit {
    fn one() -> Unit {
        Unit { dim: [0; 11], factor: 1.0 }
    }

    fn times(self, other: Unit, sign: i8) -> Unit {
        let mut dim = self.dim;
        for (d, o) in dim.iter_mut().zip(other.dim) {
            *d += o * sign;
        }
        let factor = if sign > 0 { self.factor * other.factor } else { self.factor / other.factor };
        Unit { dim, factor }
    }

    fn pow(self, e: i8) -> Unit {
        Unit { dim: self.dim.map(|d| d * e), factor: self.factor.powi(i32::from(e)) }
    }
}

/// Base units: (symbol, dimension, factor to SI, takes SI prefixes).
fn base(symbol: &str) -> Option<(Dim, f64, bool)> {
    let energy = dim(&[(M, 1), (L, 2), (T, -2)]);
    let pressure = dim(&[(M, 1), (L, -1), (T, -2)]);
    Some(match symbol {
        "g" => (dim(&[(M, 1)]), 1e-3, true),
        "m" => (dim(&[(L, 1)]), 1.0, true),
        "s" => (dim(&[(T, 1)]), 1.0, true),
        "L" | "l" => (dim(&[(L, 3)]), 1e-3, true),
        "Pa" => (pressure, 1.0, true),
        "J" => (energy, 1.0, true),
        "cal" => (energy, 4.184, true),
        "Cal" => (energy, 4184.0, false),
        "W" => (dim(&[(M, 1), (L, 2), (T, -3)]), 1.0, true),
        "V" => (dim(&[(M, 1), (L, 2), (T, -3), (I, -1)]), 1.0, true),
        "S" => (dim(&[(M, -1), (L, -2), (T, 3), (I, 2)]), 1.0, true),
        "Hz" => (dim(&[(T, -1)]), 1.0, true),
        "mol" => (dim(&[(N, 1)]), 1.0, true),
        "min" => (dim(&[(T, 1)]), 60.0, false),
        "hr" | "h" => (dim(&[(T, 1)]), 3600.0, false),
        "d" | "day" => (dim(&[(T, 1)]), 86_400.0, false),
        "yr" => (dim(&[(T, 1)]), 31_557_600.0, false),
        "mmHg" => (pressure, 133.322_387_415, false),
        "cmAq" => (pressure, 98.0665, false),
        "inHg" => (pressure, 3_386.388_666, false),
        "atm" => (pressure, 101_325.0, false),
        "lb" => (dim(&[(M, 1)]), 0.453_592_37, false),
        "oz" => (dim(&[(M, 1)]), 0.028_349_523_125, false),
        "st" => (dim(&[(M, 1)]), 6.350_293_18, false),
        "in" => (dim(&[(L, 1)]), 0.0254, false),
        "ft" => (dim(&[(L, 1)]), 0.3048, false),
        "yd" => (dim(&[(L, 1)]), 0.9144, false),
        "mi" => (dim(&[(L, 1)]), 1_609.344, false),
        "fl_oz_us" => (dim(&[(L, 3)]), 29.573_529_562_5e-6, false),
        "fl_oz_imp" => (dim(&[(L, 3)]), 28.413_062_5e-6, false),
        "cup_us" => (dim(&[(L, 3)]), 236.588_236_5e-6, false),
        "cup_imp" => (dim(&[(L, 3)]), 284.130_625e-6, false),
        "pt_us" => (dim(&[(L, 3)]), 473.176_473e-6, false),
        "pt_imp" => (dim(&[(L, 3)]), 568.261_25e-6, false),
        "count" => ([0; 11], 1.0, false),
        "%" => ([0; 11], 0.01, false),
        "dBASPL" => (dim(&[(SPL, 1)]), 1.0, false),
        "dBHL" => (dim(&[(HL, 1)]), 1.0, false),
        "IU" => (dim(&[(IU, 1)]), 1.0, false),
        "lx" => (dim(&[(LUX, 1)]), 1.0, true),
        "rad" => (dim(&[(ANGLE, 1)]), 1.0, true),
        "deg" => (dim(&[(ANGLE, 1)]), std::f64::consts::PI / 180.0, false),
        "appleEffortScore" => (dim(&[(EFFORT, 1)]), 1.0, false),
        // Diopters: the inverse of a focal length in metres.
        "D" => (dim(&[(L, -1)]), 1.0, false),
        _ => return None,
    })
}

/// SI prefixes as HealthKit writes them (`HKMetricPrefix`; `mc` for micro, `µ` is taken too).
const PREFIXES: [(&str, f64); 14] = [
    ("da", 1e1),
    ("f", 1e-15),
    ("h", 1e2),
    ("mc", 1e-6),
    ("µ", 1e-6),
    ("p", 1e-12),
    ("n", 1e-9),
    ("m", 1e-3),
    ("c", 1e-2),
    ("d", 1e-1),
    ("k", 1e3),
    ("M", 1e6),
    ("G", 1e9),
    ("T", 1e12),
];

/// One atom: a base unit, maybe prefixed, maybe with a molar mass (`mol<180.15>`: grams per
/// mole, which makes it a mass).
fn atom(s: &str) -> Option<Unit> {
    let (symbol, molar_mass) = match s.split_once('<') {
        Some((sym, rest)) => (sym, Some(rest.strip_suffix('>')?.parse::<f64>().ok()?)),
        None => (s, None),
    };
    let (dims, factor) = match base(symbol) {
        Some((d, f, _)) => (d, f),
        None => PREFIXES.iter().find_map(|(p, pf)| {
            let rest = symbol.strip_prefix(p)?;
            let (d, f, prefixable) = base(rest)?;
            prefixable.then_some((d, f * pf))
        })?,
    };
    let unit = Unit { dim: dims, factor };
    match molar_mass {
        // n mol × (g/mol) = grams: the amount becomes a mass.
        Some(mass) if unit.dim == dim(&[(N, 1)]) => {
            Some(Unit { dim: dim(&[(M, 1)]), factor: unit.factor * mass * 1e-3 })
        }
        Some(_) => None,
        None => Some(unit),
    }
}

/// A product of factors: `kg·min`, `m^2`, `(kg·hr)`.
fn product(s: &str) -> Option<Unit> {
    let mut out = Unit::one();
    for factor in split_top(s, &['·', '*']) {
        let factor = factor.trim();
        let (body, exp) = match factor.rsplit_once('^') {
            Some((b, e)) if !b.ends_with(')') || b.starts_with('(') => (b, e.parse::<i8>().ok()?),
            _ => (factor, 1),
        };
        let unit = match body.strip_prefix('(').and_then(|b| b.strip_suffix(')')) {
            Some(inner) => parse(inner)?,
            None => atom(body)?,
        };
        out = out.times(unit.pow(exp), 1);
    }
    Some(out)
}

/// Splits at `seps` outside parentheses and molar masses.
fn split_top<'a>(s: &'a str, seps: &[char]) -> Vec<&'a str> {
    let (mut depth, mut start, mut parts) = (0i32, 0, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '(' | '<' => depth += 1,
            ')' | '>' => depth -= 1,
            c if depth == 0 && seps.contains(&c) => {
                parts.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// A unit string: a numerator, and after the first top-level `/` a denominator.
pub(crate) fn parse(s: &str) -> Option<Unit> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let parts = split_top(s, &['/']);
    let numerator = match parts[0].trim() {
        "" | "1" => Unit::one(),
        n => product(n)?,
    };
    parts[1..].iter().try_fold(numerator, |acc, d| Some(acc.times(product(d)?, -1)))
}

/// A temperature unit: `(offset, factor)` taking its values to kelvin.
fn temperature(s: &str) -> Option<(f64, f64)> {
    match s.trim() {
        "degC" | "°C" => Some((273.15, 1.0)),
        "degF" | "°F" => Some((459.67, 5.0 / 9.0)),
        "K" => Some((0.0, 1.0)),
        _ => None,
    }
}

/// How a value in `from` becomes one in `to`: `(value + offset) × factor`. `None` when either
/// does not parse or their dimensions differ.
pub(crate) fn conversion(from: &str, to: &str) -> Option<(f64, f64)> {
    if let (Some((fo, ff)), Some((to_o, tf))) = (temperature(from), temperature(to)) {
        // kelvin = (v + fo) × ff; v_to = kelvin / tf − to_o = (v + fo − to_o × tf / ff) × ff / tf.
        return Some((fo - to_o * tf / ff, ff / tf));
    }
    let (from, to) = (parse(from)?, parse(to)?);
    (from.dim == to.dim).then_some((0.0, from.factor / to.factor))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(v: f64, from: &str, to: &str) -> f64 {
        conversion(from, to).map(|(o, f)| (v + o) * f).unwrap_or(f64::NAN)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn healthkit_unit_strings_convert_by_their_grammar() {
        let cases: &[(f64, &str, &str, f64)] = &[
            (1.0, "mi/hr", "m/s", 0.447_04),
            (3.6, "km/hr", "m/s", 1.0),
            (1.0, "count/min", "count/s", 1.0 / 60.0),
            (60.0, "count/min", "Hz", 1.0),
            (1.0, "kcal", "kJ", 4.184),
            (1.0, "Cal", "kcal", 1.0),
            (1000.0, "cal", "kcal", 1.0),
            (1.0, "lb", "kg", 0.453_592_37),
            (12.0, "in", "ft", 1.0),
            (1.0, "mmHg", "Pa", 133.322_387_415),
            (1.0, "mL/(kg·min)", "mL/kg·min", 1.0),
            (1.0, "mL/min·kg", "L/(kg·hr)", 0.06),
            (1.0, "kcal/hr·kg", "kcal/(kg·hr)", 1.0),
            (1.0, "kg/m^2", "g/cm^2", 0.1),
            (1.0, "mmol<180.15588000005408>/L", "mg/dL", 18.015_588),
            (1.0, "mcS", "S", 1e-6),
            (1.0, "µS", "mcS", 1.0),
            (1.0, "fl_oz_us", "mL", 29.573_529_562_5),
            (2.0, "cup_us", "pt_us", 1.0),
            (1.0, "dBASPL", "dBASPL", 1.0),
            (50.0, "%", "count", 0.5),
            (1.0, "kW", "W", 1000.0),
            (1.0, "ms", "s", 0.001),
            (1.0, "d", "hr", 24.0),
            (98.6, "degF", "degC", 37.0),
            (0.0, "degC", "K", 273.15),
            (310.15, "K", "degF", 98.6),
        ];
        for (v, from, to, want) in cases {
            let got = conv(*v, from, to);
            assert!(close(got, *want), "{v} {from} → {to}: {got}, want {want}");
        }
    }

    #[test]
    fn units_of_other_dimensions_or_unknown_do_not_convert() {
        for (from, to) in [
            ("mi/hr", "m"),
            ("kg", "L"),
            ("dBASPL", "dBHL"),
            ("IU", "mg"),
            ("degC", "m"),
            ("furlong", "m"),
            ("kmi", "m"),
            ("mol<abc>/L", "mg/dL"),
            ("", "m"),
        ] {
            assert_eq!(conversion(from, to), None, "{from} → {to}");
        }
    }
}

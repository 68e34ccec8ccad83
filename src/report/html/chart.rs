//! The chart model the page embeds: a [`Chart`] with its axes, series and marks, and the
//! rounding of the numbers in it. Below every file that draws charts (data.rs, decimate.rs, ...).

use serde::Serialize;
use serde_json::Value;

/// One chart: its axes, its series and the marks drawn over it.
#[derive(Serialize)]
pub struct Chart {
    pub id: String,
    pub title: String,
    /// `line` (x numeric), `scatter` (points only) or `ratio` (error bars per category).
    pub kind: &'static str,
    pub x: Axis,
    pub y: Axis,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub y2: Option<Axis>,
    pub series: Vec<Series>,
    /// Warmup, shaded: `[from, to]` in x units.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shade: Vec<[f64; 2]>,
    /// Vertical lines with a label (repeat starts, cache size, saturation, ratio 1).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<Mark>,
    /// Category names of a `ratio` chart (its y axis).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    /// Canvas height in pixels.
    pub height: u32,
}

#[derive(Serialize, Clone)]
pub struct Axis {
    pub label: String,
    /// `linear`, `log`, `pct` (x = 1/(1-p), log, labelled as percentiles) or `category`.
    pub scale: &'static str,
    /// How ticks and tooltips print values: `num`, `ms`, `pct` (a percentage), `percentile`
    /// (x = 1/(1-p) as `99.9%`), `bytes`, `s`, `ratio`.
    pub format: &'static str,
    /// Ticks to show (log axes over few values: the client counts, the data sizes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ticks: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

impl Axis {
    pub fn new(label: &str, scale: &'static str, format: &'static str) -> Axis {
        Axis { label: label.into(), scale, format, ticks: vec![], min: None, max: None }
    }
    pub fn seconds() -> Axis {
        Axis::new("seconds since the run started", "linear", "s")
    }
    pub fn ms_log(label: &str) -> Axis {
        Axis::new(label, "log", "ms")
    }
}

#[derive(Serialize, Default)]
pub struct Series {
    pub label: String,
    pub x: Vec<Value>,
    /// Index into the page's shared x arrays (`PageData::xs`, data.rs) when `x` is shared (then `x` is empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xref: Option<usize>,
    pub y: Vec<Value>,
    /// Error bars of a `ratio` chart: the interval's ends (null: no interval).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lo: Vec<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hi: Vec<Value>,
    /// A line of tooltip text per point (a ratio's interval and reading).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tip: Vec<String>,
    /// Index into the page's palette.
    pub color: usize,
    /// `y2`: the right axis.
    #[serde(skip_serializing_if = "is_y")]
    pub axis: &'static str,
    /// `line`, `dash`, `points`.
    pub style: &'static str,
}

fn is_y(a: &&str) -> bool {
    *a == "y" || a.is_empty()
}

impl Series {
    pub fn line(label: &str, x: Vec<Value>, y: Vec<Value>, color: usize) -> Series {
        Series { label: label.into(), x, y, color, axis: "y", style: "line", ..Default::default() }
    }
    pub fn styled(mut self, style: &'static str) -> Series {
        self.style = style;
        self
    }
    pub fn on_y2(mut self) -> Series {
        self.axis = "y2";
        self
    }
    pub fn has_data(&self) -> bool {
        self.y.iter().any(|v| v.is_number())
    }
}

#[derive(Serialize, Clone)]
pub struct Mark {
    pub x: f64,
    pub label: String,
}

impl Chart {
    pub fn new(id: &str, title: &str, kind: &'static str, x: Axis, y: Axis) -> Chart {
        Chart {
            id: id.into(),
            title: title.into(),
            kind,
            x,
            y,
            y2: None,
            series: vec![],
            shade: vec![],
            marks: vec![],
            categories: vec![],
            height: 300,
        }
    }
    pub fn has_data(&self) -> bool {
        self.series.iter().any(Series::has_data)
    }
}

/// `v` rounded to `digits` significant digits; integers print without a fraction, and
/// anything not finite is null (a gap).
pub fn sig(v: f64, digits: i32) -> Value {
    if !v.is_finite() {
        return Value::Null;
    }
    if v == 0.0 {
        return Value::from(0);
    }
    let mag = v.abs().log10().floor() as i32;
    let shift = digits - 1 - mag;
    let r = if shift >= 0 {
        let p = 10f64.powi(shift);
        (v * p).round() / p
    } else {
        let p = 10f64.powi(-shift);
        (v / p).round() * p
    };
    number(r)
}

/// Seconds with millisecond resolution.
pub fn secs(v: f64) -> Value {
    number((v * 1000.0).round() / 1000.0)
}

fn number(r: f64) -> Value {
    if r.fract() == 0.0 && r.abs() < 1e15 {
        Value::from(r as i64)
    } else {
        serde_json::Number::from_f64(r).map_or(Value::Null, Value::Number)
    }
}

/// Latency in µs as ms to 3 significant digits (the histograms' own precision); no latency
/// (a second without events) is a gap, not 0.
pub fn ms(us: f64) -> Value {
    if us > 0.0 {
        sig(us / 1000.0, 3)
    } else {
        Value::Null
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_compact() {
        assert_eq!(sig(1234.5678, 4).to_string(), "1235");
        assert_eq!(sig(0.0523456, 3).to_string(), "0.0523");
        assert_eq!(sig(123456.0, 3).to_string(), "123000");
        assert_eq!(sig(f64::NAN, 3), Value::Null);
        assert_eq!(secs(12.3456789).to_string(), "12.346");
        assert_eq!(ms(0.0), Value::Null);
    }
}

// fairbench HTML report: draws the charts described in the JSON element #fb-data with Chart.js.
// Every number was computed (and rounded) by fairbench; nothing here smooths or resamples.
// After drawing, <body> gets data-charts-rendered and data-charts-with-data (read by tests).
(function () {
  'use strict';
  var PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#666666', '#8C564B'];
  var color = function (i) { return PALETTE[i % PALETTE.length]; };

  // ---- number formats (ticks and tooltips) ----
  function num(v) {
    if (v === null || v === undefined || !isFinite(v)) return '-';
    var a = Math.abs(v);
    if (a >= 100) return Math.round(v).toLocaleString('en-US');
    if (a >= 1) return String(+v.toFixed(2));
    if (a === 0) return '0';
    return String(+v.toPrecision(3));
  }
  function bytes(v) {
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (i === 0 ? String(Math.round(v)) : String(+v.toFixed(v >= 100 ? 0 : 2))) + ' ' + units[i];
  }
  // x = 1/(1-p): 1 -> 0%, 2 -> 50%, 10 -> 90%, 1000 -> 99.9%.
  function percentile(x) {
    var p = 100 * (1 - 1 / x);
    var decimals = Math.max(0, Math.ceil(Math.log10(x) - 1e-9) - 2);
    return (+p.toFixed(decimals)) + '%';
  }
  var FORMATS = {
    num: num,
    ms: function (v) { return num(v) + ' ms'; },
    pct: function (v) { return num(v) + '%'; },
    percentile: percentile,
    bytes: bytes,
    s: function (v) { return num(v) + ' s'; },
    ratio: function (v) { return (+v.toPrecision(3)) + 'x'; }
  };
  var fmt = function (axis) { return FORMATS[axis.format] || num; };

  // ---- plugins: warmup shading, vertical marks, ratio error bars ----
  var shadePlugin = {
    id: 'fbShade',
    beforeDatasetsDraw: function (chart, args, opts) {
      var ranges = opts.ranges || [], x = chart.scales.x, a = chart.chartArea, ctx = chart.ctx;
      if (!ranges.length) return;
      ctx.save();
      ranges.forEach(function (r) {
        var x0 = Math.max(a.left, x.getPixelForValue(r[0])), x1 = Math.min(a.right, x.getPixelForValue(r[1]));
        if (x1 <= x0) return;
        ctx.fillStyle = 'rgba(120,120,120,0.16)';
        ctx.fillRect(x0, a.top, x1 - x0, a.bottom - a.top);
        if (x1 - x0 > 44) {
          ctx.fillStyle = '#555';
          ctx.font = '11px sans-serif';
          ctx.fillText('warmup', x0 + 4, a.top + 12);
        }
      });
      ctx.restore();
    }
  };
  var marksPlugin = {
    id: 'fbMarks',
    // Room for one row of labels between the legend and the plot: the legend is fitted taller.
    beforeInit: function (chart, args, opts) {
      var legend = chart.legend;
      if (!(opts.marks || []).length || !legend) return;
      var fit = legend.fit;
      legend.fit = function () { fit.call(legend); legend.height += 14; };
    },
    afterDatasetsDraw: function (chart, args, opts) {
      var marks = (opts.marks || []).slice().sort(function (p, q) { return p.x - q.x; });
      var x = chart.scales.x, a = chart.chartArea, ctx = chart.ctx, rowEnd = [-Infinity, -Infinity];
      ctx.save();
      ctx.font = '11px sans-serif';
      marks.forEach(function (m) {
        var px = x.getPixelForValue(m.x);
        if (!(px >= a.left - 0.5 && px <= a.right + 0.5)) return;
        var w = ctx.measureText(m.label).width, tx = px + 4;
        if (tx + w > a.right) tx = px - 4 - w;          // keep the label inside the plot's width
        var row = tx > rowEnd[0] + 8 ? 0 : 1;            // a second row only when labels would touch
        rowEnd[row] = tx + w;
        var ty = a.top - 4 - 14 * row;
        ctx.strokeStyle = '#B00020';
        ctx.setLineDash([5, 4]);
        ctx.lineWidth = 1.5;
        ctx.beginPath(); ctx.moveTo(px, ty + 2); ctx.lineTo(px, a.bottom); ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = '#B00020';
        ctx.fillText(m.label, tx, ty);
      });
      ctx.restore();
    }
  };
  var errorBarPlugin = {
    id: 'fbErrorBars',
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx, x = chart.scales.x, y = chart.scales.y, a = chart.chartArea;
      ctx.save();
      ctx.beginPath();
      ctx.rect(a.left, a.top, a.right - a.left, a.bottom - a.top);
      ctx.clip();                                        // bars beyond the axis stop at its edge
      chart.data.datasets.forEach(function (ds, i) {
        if (!chart.isDatasetVisible(i)) return;
        ctx.strokeStyle = ds.borderColor;
        ctx.lineWidth = 2;
        ds.data.forEach(function (p) {
          if (p.lo === null || p.hi === null || p.lo === undefined) return;
          var py = y.getPixelForValue(p.y), x0 = x.getPixelForValue(p.lo), x1 = x.getPixelForValue(p.hi);
          ctx.beginPath();
          ctx.moveTo(x0, py); ctx.lineTo(x1, py);
          ctx.moveTo(x0, py - 5); ctx.lineTo(x0, py + 5);
          ctx.moveTo(x1, py - 5); ctx.lineTo(x1, py + 5);
          ctx.stroke();
        });
      });
      ctx.restore();
    }
  };

  // ---- axes ----
  function scale(axis, position, categories) {
    var f = fmt(axis);
    var s = {
      type: axis.scale === 'linear' || axis.scale === 'category' ? 'linear' : 'logarithmic',
      position: position,
      title: { display: true, text: axis.label },
      ticks: { callback: function (v) { return f(v); }, maxRotation: 0, autoSkipPadding: 12 }
    };
    if (axis.min !== undefined) s.min = axis.min;
    if (axis.max !== undefined) s.max = axis.max;
    if (axis.scale === 'linear' && axis.format !== 's') s.beginAtZero = true;
    if (axis.format === 's') s.ticks.includeBounds = false;  // no odd "35.1 s" tick at the end
    if (axis.scale === 'pct') {
      // HdrHistogram style: ticks at 0%, 50%, 90%, 99%, 99.9%, ... up to the axis' end.
      s.afterBuildTicks = function (sc) {
        var t = [1, 2], v = 10;
        for (; v <= sc.max * 1.0001; v *= 10) t.push(v);
        sc.ticks = t.map(function (v) { return { value: v }; });
      };
    } else if (axis.ticks && axis.ticks.length) {
      s.afterBuildTicks = function (sc) { sc.ticks = axis.ticks.map(function (v) { return { value: v }; }); };
    } else if (s.type === 'logarithmic') {
      // Chart.js' default log ticks crowd: keep 1-2-5 steps only.
      s.ticks.callback = function (v) {
        var m = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
        return [1, 2, 5].some(function (k) { return Math.abs(m - k) < 1e-6; }) ? f(v) : '';
      };
    }
    if (categories) {
      s.type = 'linear';
      s.reverse = true;
      s.min = -0.5;
      s.max = categories.length - 0.5;
      s.beginAtZero = false;
      s.afterBuildTicks = function (sc) { sc.ticks = categories.map(function (c, i) { return { value: i }; }); };
      s.ticks = { callback: function (v) { return categories[v] || ''; }, autoSkip: false };
      s.grid = { display: false };
    }
    return s;
  }

  // ---- one chart from its spec ----
  function build(spec, shared) {
    var canvas = document.getElementById('chart-' + spec.id);
    if (!canvas) throw new Error('no canvas for chart ' + spec.id);
    var n = spec.series.length;
    spec.series.forEach(function (s) { if (s.xref !== undefined) s.x = shared[s.xref]; });
    var datasets = spec.series.map(function (s, si) {
      var offset = spec.kind === 'ratio' && n > 1 ? (si - (n - 1) / 2) * 0.22 : 0;
      var data = [];
      for (var i = 0; i < s.x.length; i++) {
        if (s.x[i] === null || (spec.kind !== 'line' && s.y[i] === null)) continue;
        var p = { x: s.x[i], y: s.y[i] === null ? null : s.y[i] + offset };
        if (s.lo) { p.lo = s.lo[i]; p.hi = s.hi[i]; p.tip = s.tip[i]; }
        data.push(p);
      }
      var points = s.style === 'points' || data.length <= 60;
      return {
        label: s.label,
        data: data,
        yAxisID: s.axis === 'y2' ? 'y2' : 'y',
        borderColor: color(s.color),
        backgroundColor: color(s.color),
        borderWidth: s.style === 'points' ? 0 : 1.5,
        borderDash: s.style === 'dash' ? [6, 4] : undefined,
        showLine: s.style !== 'points',
        pointRadius: spec.kind === 'scatter' ? 1.6 : (spec.kind === 'ratio' ? 5 : (points ? 3 : 0)),
        pointHoverRadius: 4,
        spanGaps: false,
        tip: s.tip
      };
    });
    var sameX = spec.kind === 'line' && spec.series.every(function (s) { return s.x.length === spec.series[0].x.length; })
      && spec.series.length > 0 && spec.series[0].x.length > 60;
    var scales = { x: scale(spec.x, 'bottom'), y: scale(spec.y, 'left', spec.kind === 'ratio' ? spec.categories : null) };
    if (spec.y2) scales.y2 = Object.assign(scale(spec.y2, 'right'), { grid: { drawOnChartArea: false } });
    var fx = fmt(spec.x);
    var chart = new Chart(canvas, {
      type: spec.kind === 'line' ? 'line' : 'scatter',
      data: { datasets: datasets },
      plugins: [shadePlugin, marksPlugin].concat(spec.kind === 'ratio' ? [errorBarPlugin] : []),
      options: {
        parsing: false,
        normalized: spec.kind === 'line',               // x ascending: timelines, curves, sweeps
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        interaction: sameX ? { mode: 'index', intersect: false } : { mode: 'nearest', axis: spec.kind === 'ratio' ? 'xy' : 'x', intersect: false },
        scales: scales,
        plugins: {
          title: { display: true, text: spec.title, font: { size: 14, weight: 'bold' } },
          legend: { position: 'top', labels: { boxWidth: 14, usePointStyle: spec.kind !== 'line' } },
          decimation: { enabled: false },
          fbShade: { ranges: spec.shade || [] },
          fbMarks: { marks: spec.marks || [] },
          tooltip: {
            callbacks: {
              title: function (items) {
                if (!items.length) return '';
                if (spec.kind === 'ratio') return spec.categories[Math.round(items[0].raw.y)] || '';
                return spec.x.label.split(' (')[0] + ': ' + fx(items[0].raw.x);
              },
              label: function (item) {
                var ds = item.dataset;
                if (spec.kind === 'ratio') return ds.label + ': ' + item.raw.tip;
                var axis = ds.yAxisID === 'y2' ? spec.y2 : spec.y;
                return ds.label + ': ' + fmt(axis)(item.raw.y);
              }
            }
          }
        }
      }
    });
    var withData = datasets.some(function (d) {
      return d.data.some(function (p) { return typeof p.y === 'number' && isFinite(p.y); });
    });
    return { chart: chart, withData: withData };
  }

  // ---- draw everything, then say so in the DOM ----
  var charts = [], rendered = 0, withData = 0;
  try {
    var data = JSON.parse(document.getElementById('fb-data').textContent);
    data.charts.forEach(function (spec) {
      try {
        var r = build(spec, data.xs || []);
        charts.push(r.chart);
        rendered++;
        if (r.withData) withData++;
      } catch (e) {
        window.fbError('chart ' + spec.id + ': ' + e);
      }
    });
  } catch (e) {
    window.fbError('chart data: ' + e);
  }
  document.body.dataset.chartsRendered = String(rendered);
  document.body.dataset.chartsWithData = String(withData);

  // ---- filter boxes over long tables (server variables, counters) ----
  Array.prototype.forEach.call(document.querySelectorAll('input.filter'), function (input) {
    input.addEventListener('input', function () {
      var q = input.value.toLowerCase(), table = document.getElementById(input.dataset.filter);
      if (!table) return;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        row.style.display = row.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
      });
    });
  });

  // ---- print: open the collapsibles worth printing, fit the charts to the page ----
  var opened = [];
  window.addEventListener('beforeprint', function () {
    Array.prototype.forEach.call(document.querySelectorAll('details:not([open]):not(.print-hide)'), function (d) {
      d.open = true;
      opened.push(d);
    });
    charts.forEach(function (c) { c.resize(); });
  });
  window.addEventListener('afterprint', function () {
    opened.forEach(function (d) { d.open = false; });
    opened = [];
    charts.forEach(function (c) { c.resize(); });
  });
})();

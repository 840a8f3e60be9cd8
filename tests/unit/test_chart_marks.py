"""The timeline chart's SVG marks: one bar per non-empty bucket, a tooltip each, few labels."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.utils.safestring import SafeString

from webapp.charts import DAY, HOUR, SIX_HOURS, bar_chart, bar_width, bucket_start

T0 = datetime(2026, 3, 1, 0, tzinfo=UTC)


def test_bars_are_drawn_for_counted_buckets_only_with_their_time_and_count():
    buckets = [(T0 + i * HOUR, n) for i, n in enumerate([0, 3, 0, 12, 1])]
    chart = bar_chart(buckets)
    assert isinstance(chart.marks, SafeString)
    assert chart.marks.count("<rect ") == 3
    assert "<title>Mar 01 03:00: 12</title>" in chart.marks
    assert (chart.total, chart.peak, chart.per) == (16, 12, "hour")
    assert 'y="0.0"' in chart.marks and 'height="102.0"' in chart.marks  # the peak fills the plot
    assert 'height="8.5"' in chart.marks  # 1 of 12


def test_a_single_incident_next_to_a_storm_still_shows():
    chart = bar_chart([(T0, 1000), (T0 + HOUR, 1)])
    assert 'height="1"' in chart.marks


def test_six_hour_bars_say_which_six_hours_they_count():
    buckets = [(T0 + i * SIX_HOURS, i) for i in range(121)]
    chart = bar_chart(buckets, SIX_HOURS)
    assert chart.per == "6 hours"
    assert chart.marks.count("<rect ") == 120  # the first bucket is empty
    assert "<title>Mar 01 06:00-12:00: 1</title>" in chart.marks
    assert chart.marks.count('class="axis"') <= 7  # a few time labels, not one per bar


def test_an_empty_range_draws_no_bar():
    chart = bar_chart([(T0, 0), (T0 + HOUR, 0)])
    assert (chart.total, chart.peak, str(chart.marks).count("<rect")) == (0, 0, 0)


def test_a_week_is_drawn_in_hours_and_a_month_in_six_hours_aligned_on_utc():
    now = datetime(2026, 3, 31, 14, 25, tzinfo=UTC)
    assert bar_width(now - timedelta(days=7), now) == HOUR
    assert bar_width(now - timedelta(days=30), now) == SIX_HOURS
    assert bucket_start(now, SIX_HOURS) == datetime(2026, 3, 31, 12, tzinfo=UTC)
    assert bucket_start(now, HOUR) == datetime(2026, 3, 31, 14, tzinfo=UTC)
    assert bucket_start(now, DAY) == datetime(2026, 3, 31, tzinfo=UTC)

"""Template filters of the UI: inline Markdown for suggestion text (escaped, never raw HTML)."""

from django import template
from django.utils.safestring import SafeString

from webapp.markdown import render_inline

register = template.Library()


@register.filter
def md_inline(value: str) -> SafeString:
    return render_inline(str(value or ""))

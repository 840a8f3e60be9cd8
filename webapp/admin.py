"""Admin for memberships: who sees which project, as viewer or responder."""

from django.contrib import admin

from webapp.models import Membership


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "project", "role")
    list_filter = ("role", "project")

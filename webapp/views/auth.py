"""Login and logout (Django's auth views) with the UI's security headers."""

from django.contrib.auth import views as auth_views

from webapp.pages import secure

login = secure(auth_views.LoginView.as_view(redirect_authenticated_user=True))
logout = secure(auth_views.LogoutView.as_view(next_page="login"))

"""Site-wide pages: errors under the right password field, the log-out message, the account menu,
the site's own 404, the favicon, the admin's name and the way back from the API docs."""

import pytest

pytestmark = pytest.mark.django_db


def test_weak_password_error_sits_under_the_password_not_its_confirmation(anonymous):
    response = anonymous.post(
        "/accounts/signup/", {"username": "newton", "password1": "123", "password2": "123"}
    )
    form = response.context["form"]
    assert form.errors["password1"]
    assert "password2" not in form.errors


def test_mismatch_still_sits_under_the_confirmation(anonymous):
    response = anonymous.post(
        "/accounts/signup/",
        {"username": "newton", "password1": "a-long-password-1", "password2": "different-2"},
    )
    assert list(response.context["form"].errors) == ["password2"]


def test_weak_new_password_error_sits_under_the_new_password(owner_client, password):
    response = owner_client.post(
        "/accounts/password_change/",
        {"old_password": password, "new_password1": "123", "new_password2": "123"},
    )
    form = response.context["form"]
    assert form.errors["new_password1"] and "new_password2" not in form.errors


def test_log_out_says_so(owner_client):
    response = owner_client.post("/accounts/logout/", follow=True)
    assert "You are logged out." in response.content.decode()


def test_token_page_is_in_the_account_menu(owner_client):
    page = owner_client.get("/papers/").content.decode()
    assert 'class="account-menu"' in page and 'href="/accounts/tokens/"' in page


def test_unknown_paper_gets_the_site_404(anonymous):
    response = anonymous.get("/papers/2401.00000/")
    assert response.status_code == 404
    page = response.content.decode()
    assert "Nothing here" in page and 'class="topbar"' in page


def test_favicon_is_linked_and_served(anonymous):
    assert 'rel="icon"' in anonymous.get("/papers/").content.decode()
    response = anonymous.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")


def test_admin_is_named_and_api_docs_lead_home(staff_client):
    assert "Flatuniverse administration" in staff_client.get("/admin/").content.decode()
    docs = staff_client.get("/api/docs/").content.decode()
    assert 'class="fu-api-nav"' in docs and 'href="/"' in docs

"""Accounts: sign up, log in and out, change and reset a password."""

import pytest


@pytest.mark.django_db
def test_visitor_can_sign_up_and_lands_in_chat(anonymous, django_user_model, password):
    response = anonymous.post(
        "/accounts/signup/",
        {"username": "newton", "password1": password, "password2": password},
        follow=True,
    )
    assert response.status_code == 200
    assert response.redirect_chain[-1][0] == "/chat/"
    assert django_user_model.objects.filter(username="newton").exists()
    assert response.context["user"].is_authenticated


@pytest.mark.django_db
def test_sign_up_rejects_mismatched_passwords(anonymous, django_user_model):
    response = anonymous.post(
        "/accounts/signup/",
        {"username": "newton", "password1": "a-long-password-1", "password2": "different-2"},
    )
    assert response.status_code == 200
    assert "didn’t match" in response.content.decode() or "didn't match" in response.content.decode()
    assert not django_user_model.objects.filter(username="newton").exists()


@pytest.mark.django_db
def test_owner_logs_in_and_out(anonymous, owner, password):
    response = anonymous.post("/accounts/login/", {"username": "olivia", "password": password})
    assert response.status_code == 302
    assert anonymous.get("/chat/").status_code == 200
    anonymous.post("/accounts/logout/")
    response = anonymous.get("/chat/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.django_db
def test_owner_changes_password(owner_client, owner, password):
    response = owner_client.post(
        "/accounts/password_change/",
        {"old_password": password, "new_password1": "a brand new pass 42", "new_password2": "a brand new pass 42"},
    )
    assert response.status_code == 302
    owner.refresh_from_db()
    assert owner.check_password("a brand new pass 42")


@pytest.mark.django_db
def test_owner_resets_a_forgotten_password_by_email(anonymous, owner, mailoutbox):
    response = anonymous.post("/accounts/password_reset/", {"email": owner.email}, follow=True)
    assert "reset link is on its way" in response.content.decode()
    assert len(mailoutbox) == 1
    link = next(line for line in mailoutbox[0].body.splitlines() if "/reset/" in line).strip()
    path = "/" + link.split("://", 1)[1].split("/", 1)[1]
    form_page = anonymous.get(path, follow=True)
    assert "Choose a new password" in form_page.content.decode()
    done = anonymous.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": "an entirely new phrase 9", "new_password2": "an entirely new phrase 9"},
        follow=True,
    )
    assert "Password set" in done.content.decode()
    owner.refresh_from_db()
    assert owner.check_password("an entirely new phrase 9")

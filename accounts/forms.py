"""Account forms whose password errors sit under the field that is wrong.

Django checks a new password's strength on the confirmation field (`password2`), so "This
password is too short" appears under "Password confirmation"; the user then retypes the wrong
field. Only a mismatch belongs there, and it still goes there."""

from django.contrib.auth.forms import PasswordChangeForm, UserCreationForm


class SignupForm(UserCreationForm):
    def validate_password_for_user(self, user, password_field_name="password1", **kwargs):
        super().validate_password_for_user(user, password_field_name="password1", **kwargs)


class AccountPasswordChangeForm(PasswordChangeForm):
    def validate_password_for_user(self, user, password_field_name="new_password1", **kwargs):
        super().validate_password_for_user(user, password_field_name="new_password1", **kwargs)


app_name = "papers"

urlpatterns: list = []

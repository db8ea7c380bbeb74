from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("papers", "0005_lexicon_source")]

    operations = [
        migrations.AddField(
            model_name="ingestrun",
            name="progress",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]

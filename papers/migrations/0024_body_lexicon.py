"""The bodies' BM25 index (papers.indexing.lexical.BODIES): its tables (0025 fills them)."""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.db.models.deletion
import pgvector.django.sparsevec
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('papers', '0023_chunk_word_champions'),
    ]

    operations = [
        migrations.CreateModel(
            name='BodyStats',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('documents', models.PositiveIntegerField(default=0)),
                ('total_length', models.FloatField(default=0.0)),
            ],
            options={
                'abstract': False,
            },
        ),
        migrations.CreateModel(
            name='BodyTermYear',
            fields=[
                ('term_id', models.IntegerField()),
                ('year', models.SmallIntegerField()),
                ('champion_floor', models.FloatField()),
                ('pk', models.CompositePrimaryKey('term_id', 'year', blank=True, editable=False, primary_key=True, serialize=False)),
            ],
            options={
                'abstract': False,
            },
        ),
        migrations.CreateModel(
            name='BodyLexicon',
            fields=[
                ('published', models.DateTimeField()),
                ('length', models.FloatField(help_text='Weighted number of terms (title counts double)')),
                ('terms', django.contrib.postgres.fields.ArrayField(base_field=models.IntegerField(), size=None)),
                ('weights', pgvector.django.sparsevec.SparseVectorField()),
                ('indexed_at', models.DateTimeField()),
                ('source_version', models.PositiveIntegerField(default=0)),
                ('source_modified', models.DateTimeField(null=True)),
                ('paper', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='body_lexicon', serialize=False, to='papers.paper')),
            ],
            options={
                'indexes': [django.contrib.postgres.indexes.GinIndex(fields=['terms'], name='papers_body_terms_idx'), models.Index(fields=['published'], name='papers_body_published_idx')],
            },
        ),
        migrations.CreateModel(
            name='BodyTerm',
            fields=[
                ('id', models.AutoField(primary_key=True, serialize=False)),
                ('lexeme', models.TextField()),
                ('df', models.PositiveIntegerField(default=0, help_text='Papers containing the lexeme')),
                ('champion_floor', models.FloatField(blank=True, null=True)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('lexeme',), name='papers_unique_body_term')],
            },
        ),
        migrations.CreateModel(
            name='BodyChampion',
            fields=[
                ('term_id', models.IntegerField()),
                ('weight', models.FloatField()),
                ('published', models.DateTimeField()),
                ('pk', models.CompositePrimaryKey('paper_id', 'term_id', blank=True, editable=False, primary_key=True, serialize=False)),
                ('paper', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='papers.paper')),
            ],
            options={
                'indexes': [models.Index(fields=['term_id', '-weight'], include=('paper', 'published'), name='papers_body_champion_walk_idx')],
            },
        ),
    ]

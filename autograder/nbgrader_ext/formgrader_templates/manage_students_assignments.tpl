{#- nbgrader's page, its score columns labelled final or raw (autograder/nbgrader_ext/formgrader_labels.py) -#}
{%- extends 'nbgrader/manage_students_assignments.tpl' -%}

{%- block table_header -%}
<tr>
  <th>Assignment ID</th>
  <th class="text-center" title="the late penalty taken: the score grades.csv, the LMS files and the feedback show">Overall Score (final)</th>
  <th class="text-center" title="the points of these cells as graded, before the late penalty: the final score is beside it">Code Score (raw)</th>
  <th class="text-center" title="the points of these cells as graded, before the late penalty: the final score is beside it">Written Score (raw)</th>
  <th class="text-center" title="the points of these cells as graded, before the late penalty: the final score is beside it">Task Score (raw)</th>
  <th class="text-center">Needs Manual Grade?</th>
</tr>
{%- endblock -%}

import type { Generated } from 'kysely';
import type {
  OsworldDomainGradingRow,
  OsworldGradeRow,
  OsworldRunGradingRow,
  OsworldTaskGradeRow,
} from './osworld-grades-repository.js';

// OSWorld's own tables and views (its migrations: ../migrations), as Kysely sees them beside the
// shared ones; the table-types test holds them to the migrated schema.

interface OsworldGradesTable extends Omit<OsworldGradeRow, 'graded_at'> {
  graded_at: Generated<Date>;
}

/** Both graders' scores of an attempt (`--grader both`) and whether they agree. */
interface OsworldGraderComparisonsTable {
  run_id: string;
  task_id: string;
  attempt: number;
  port_score: number | null;
  port_no_score_cause: string | null;
  upstream_score: number | null;
  upstream_no_score_cause: string | null;
  agree: boolean;
  details: unknown;
  compared_at: Generated<Date>;
}

export type OsworldTables = {
  osworld_grades: OsworldGradesTable;
  osworld_grader_comparisons: OsworldGraderComparisonsTable;
  osworld_task_grades: OsworldTaskGradeRow;
  osworld_run_grading: OsworldRunGradingRow;
  osworld_domain_grading: OsworldDomainGradingRow;
};

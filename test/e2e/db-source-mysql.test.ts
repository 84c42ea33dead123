// The database input end to end on mysql: the cases are db-source/cases.ts, shared with the other dialect.
import { databaseInputTests } from './db-source/cases.js';

databaseInputTests('mysql');

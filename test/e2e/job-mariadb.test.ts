/** The job's cases (./job-cases.ts) on MariaDB: its database input and the job's sink on one server. */
import { jobCases } from './job-cases.js';

jobCases('mysql');

/** The job's cases (./job-cases.ts) on PostgreSQL: its database input and the job's sink on one server. */
import { jobCases } from './job-cases.js';

jobCases('postgres');

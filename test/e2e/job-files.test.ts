/** The job's file cases (./job-files-cases.ts) on PostgreSQL: the job's sink on it, the input a shared file. */
import { jobFileCases } from './job-files-cases.js';

jobFileCases('postgres');

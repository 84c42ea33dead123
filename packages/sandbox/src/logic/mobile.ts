/**
 * Mobile intelligence features (decision spec 2.5, mobile_intel engine): in the real service they come from
 * the SDK's device data; here they are a deterministic function of app_user_id and declared_income.
 */
import { unit } from './hash.js';

export interface MobileFeatures {
  readonly fraud_flag: boolean;
  readonly all_sms_count: number;
  readonly vendor_payday_score: number;
  readonly mobile_intel_affordability: number;
  readonly estimated_salary: number;
}

export function mobileFeatures(appUserId: string, declaredIncome: number): MobileFeatures {
  const fraud = unit(appUserId, 'mobile.fraud') < 0.03;
  const sms = Math.round(30 + 4_000 * unit(appUserId, 'mobile.sms') ** 2);
  const score = Math.round(
    300 + 200 * (unit(appUserId, 'mobile.s1') + unit(appUserId, 'mobile.s2') + unit(appUserId, 'mobile.s3')),
  );
  const salary =
    declaredIncome > 0 ? Math.round((declaredIncome * (0.75 + 0.5 * unit(appUserId, 'mobile.salary'))) / 100) * 100 : 0;
  return {
    fraud_flag: fraud,
    all_sms_count: sms,
    vendor_payday_score: score,
    mobile_intel_affordability: Math.round(salary * (0.2 + (0.2 * (score - 300)) / 600)),
    estimated_salary: salary,
  };
}
